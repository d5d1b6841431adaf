/// Brings a database's schema from the version it records (`PRAGMA user_version`) to the newest this code
/// knows, one step at a time, all in one transaction: a failed migration leaves the file as it was.
package struct Migrator: Sendable {
    /// One schema change, from `version - 1` to `version`.
    package struct Step: Sendable {
        /// The version the database has after this step.
        package let version: Int
        /// Applies the change. Runs inside the migration's transaction.
        package let apply: @Sendable (Connection) throws -> Void

        /// Creates a step.
        package init(version: Int, apply: @escaping @Sendable (Connection) throws -> Void) {
            self.version = version
            self.apply = apply
        }
    }

    /// What `migrate` found and did.
    package struct Outcome: Equatable, Sendable {
        /// The version the file had.
        package let from: Int
        /// The version it has now.
        package let to: Int

        /// Creates an outcome.
        package init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Why a database cannot be migrated.
    package enum Failure: Error, Equatable, Sendable {
        /// The file was written by a newer version of the software; it is left untouched.
        case newerVersion(found: Int, supported: Int)
    }

    private let steps: [Step]

    /// Creates a migrator; `steps` must have versions 1, 2, 3, ... in order.
    package init(steps: [Step]) {
        precondition(
            steps.enumerated().allSatisfy { $0.offset + 1 == $0.element.version },
            "migration steps must be numbered 1, 2, 3, ...")
        self.steps = steps
    }

    /// The newest version this migrator produces.
    package var latestVersion: Int { steps.count }

    /// The version recorded in `db`.
    package func currentVersion(of db: Connection) throws -> Int {
        Int(try db.integer("PRAGMA user_version") ?? 0)
    }

    /// Applies the missing steps in one write transaction. Throws `Failure.newerVersion` (changing nothing)
    /// when the file is newer than this code.
    package func migrate(_ db: Connection) throws -> Outcome {
        try db.transaction(writing: true) {
            let found = try currentVersion(of: db)
            guard found <= latestVersion else {
                throw Failure.newerVersion(found: found, supported: latestVersion)
            }
            for step in steps where step.version > found {
                try step.apply(db)
                try db.execute("PRAGMA user_version = \(step.version)")
            }
            return Outcome(from: found, to: latestVersion)
        }
    }
}
