/// How a document changed between two snapshots of a query, in Firestore's terms.
public enum DocumentChangeType: Hashable, Sendable {
    /// It entered the query's results.
    case added
    /// It is still in the results, with different content or metadata (and maybe a different index).
    case modified
    /// It left the results.
    case removed
}

/// One change between the previous snapshot and this one.
///
/// Applied in order to the previous snapshot's documents — a `removed` change removes the document at
/// `oldIndex`; `added` inserts at `newIndex`; `modified` removes at `oldIndex` and inserts at `newIndex` — they give
/// this snapshot's documents. Indexes refer to the list as it is when the change is applied; the unused index
/// is -1.
public struct DocumentChange<Document: Sendable>: Sendable {
    /// What happened.
    public let type: DocumentChangeType
    /// The document as it is now (for `removed`: as it last was).
    public let document: Document
    /// Its index before the change, or -1 for `added`.
    public let oldIndex: Int
    /// Its index after the change, or -1 for `removed`.
    public let newIndex: Int

    /// A change.
    public init(type: DocumentChangeType, document: Document, oldIndex: Int, newIndex: Int) {
        self.type = type
        self.document = document
        self.oldIndex = oldIndex
        self.newIndex = newIndex
    }
}

extension DocumentChange: Equatable where Document: Equatable {}
