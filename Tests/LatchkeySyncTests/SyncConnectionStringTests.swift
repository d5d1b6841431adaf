import Foundation
import LatchkeySync
import Testing

/// `latchkey_mode` in a connection string: taken out before libpq sees it, in both of libpq's forms.
@Suite("The connection string's latchkey_mode")
struct SyncConnectionStringTests {
    @Test func keyValueStringsLoseTheKeywordAndKeepTheRestAsWritten() throws {
        let pooled = try SyncConnectionString("host=/run/pgbouncer port=6432 latchkey_mode=pooled dbname=latchkey")
        #expect(pooled == SyncConnectionString(libpq: "host=/run/pgbouncer port=6432 dbname=latchkey", mode: .pooled))
        let quoted = try SyncConnectionString("password='a b\\' latchkey_mode=direct' latchkey_mode = 'pooled'")
        #expect(quoted == SyncConnectionString(libpq: "password='a b\\' latchkey_mode=direct'", mode: .pooled))
        #expect(
            try SyncConnectionString("host=db dbname=latchkey")
                == SyncConnectionString(libpq: "host=db dbname=latchkey", mode: .direct))
        #expect(try SyncConnectionString("latchkey_mode=direct") == SyncConnectionString(libpq: "", mode: .direct))
    }

    @Test func urisLoseTheQueryParameter() throws {
        #expect(
            try SyncConnectionString("postgresql://db:6432/latchkey?latchkey_mode=pooled&sslmode=verify-full")
                == SyncConnectionString(libpq: "postgresql://db:6432/latchkey?sslmode=verify-full", mode: .pooled))
        #expect(
            try SyncConnectionString("postgres://db/latchkey?latchkey_mode=pooled")
                == SyncConnectionString(libpq: "postgres://db/latchkey", mode: .pooled))
        #expect(
            try SyncConnectionString("postgresql://db/latchkey?sslmode=require")
                == SyncConnectionString(libpq: "postgresql://db/latchkey?sslmode=require", mode: .direct))
    }

    @Test func aModeThatIsNeitherIsAMalformedConnectionString() {
        #expect {
            _ = try SyncConnectionString("host=db latchkey_mode=session")
        } throws: { error in
            let error = error as? PostgresError
            return error?.malformedConnectionString == true
                && error?.message == "latchkey_mode must be direct or pooled, not session"
        }
    }
}
