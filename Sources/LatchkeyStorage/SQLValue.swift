package import FoundationEssentials

/// A value bound to a statement parameter or read from a column.
package enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)
}
