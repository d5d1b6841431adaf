import Foundation
import LatchkeyStorage

/// The names and bytes of every file in a directory, to prove that a failed operation changed nothing.
struct FileSnapshot: Equatable {
    let files: [String: Data]

    init(directory: String, only names: Set<String>? = nil) throws {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where names?.contains(name) ?? true {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        self.files = files
    }
}

/// Direct SQL on a keychain file, for tests that damage it on purpose.
enum RawFile {
    static func execute(_ path: String, _ sql: String, _ arguments: [SQLValue] = []) throws {
        let db = try Connection(path: path, mode: .readWrite)
        try db.run(sql, arguments)
    }

    static func blob(_ path: String, _ sql: String, _ arguments: [SQLValue] = []) throws -> Data? {
        let db = try Connection(path: path, mode: .readWrite)
        return try db.blob(sql, arguments)
    }

    static func integer(_ path: String, _ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        let db = try Connection(path: path, mode: .readWrite)
        return try db.integer(sql, arguments)
    }
}

func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
