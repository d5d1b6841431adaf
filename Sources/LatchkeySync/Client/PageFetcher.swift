internal import FoundationEssentials
internal import LatchkeyEngine

/// What a pull needs to fetch a page and make it ready to write, free of the client (so it runs on another
/// thread while the client writes the page before): the vault, this device, the vault's keys and the
/// keychain's sync view.
struct PageFetcher: Sendable {
    let vault: Data
    let device: Data
    let keyring: VaultKeyring
    let sync: KeychainSync

    /// A page as pulled: how many rows, the last one's sequence, the server's collected and newest marks,
    /// and the rows to write (this device's own pushes at the version it knows left out), opened and sealed.
    struct Page: Sendable {
        var count: Int
        var last: Int64
        var collected: Int64
        var newest: Int64
        var rows: [SyncPreparedRow]
    }

    /// Fetches a page after `cursor` from `source` and makes it ready to write. Uses no connection but
    /// `source`, which nothing else uses meanwhile. The server's failure is returned, not thrown: the client
    /// looks at it on its own thread (`SyncClient.serverCall`: a dropped connection is made again).
    func fetch(from source: SyncServer, after cursor: Int64, limit: Int) throws(KeychainError) -> Result<
        Page, PostgresError
    > {
        let pulled: (rows: [SyncEnvelope], collected: Int64, newest: Int64)
        let clock = ContinuousClock()
        let started = clock.now
        do throws(PostgresError) {
            pulled = try source.pull(vault: vault, after: cursor, limit: limit)
        } catch {
            return .failure(error)
        }
        let rows = pulled.rows
        // This device's own pushes coming back at the version it knows need nothing: it wrote them.
        // The rows are filtered only when there are any (a filter copies every row it keeps).
        let own = rows.compactMap { $0.author == device ? $0.itemID : nil }
        let known = own.isEmpty ? [:] : try sync.knownVersions(own)
        let incoming =
            own.isEmpty ? rows : rows.filter { $0.author != device || known[$0.itemID]?.version != $0.version }
        let fetched = clock.now
        let prepared = try prepare(incoming)
        trace("fetched \(rows.count) rows in \(fetched - started), prepared in \(clock.now - fetched)")
        return .success(
            Page(
                count: rows.count, last: rows.last?.sequence ?? cursor, collected: pulled.collected,
                newest: pulled.newest, rows: prepared))
    }

    /// Verifies and decrypts rows under the vault's keys, then validates and seals their items under this
    /// keychain's keys, on every core. A row that does not open carries its reason (errSecDecode).
    func prepare(_ envelopes: [SyncEnvelope]) throws(KeychainError) -> [SyncPreparedRow] {
        let vault = vault
        let keyring = keyring
        let opened = try ParallelMap.map(envelopes) {
            (envelope) throws(KeychainError) -> Result<SyncRecord, KeychainError> in
            Result { () throws(KeychainError) in try VaultCrypto.open(envelope, vault: vault, keyring: keyring) }
        }
        return sync.prepare(envelopes, opened: opened, except: device)
    }
}
