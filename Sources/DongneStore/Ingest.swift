public import DongneCore

/// Why received bytes were not stored.
public enum IngestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes break a document rule (including a bad signature); nothing was stored.
    case invalid(DocumentError)
    /// The store failed; nothing was stored.
    case store(StoreError)

    public var description: String {
        switch self {
        case .invalid(let error): "invalid document: \(error)"
        case .store(let error): "\(error)"
        }
    }
}

extension Store {
    /// Takes bytes received from anywhere and stores them if they are a valid, new document.
    ///
    /// The checks run cheapest first: size and canonical form and fields (parsing), then the duplicate check by
    /// id, and only then the Ed25519 signature, which costs about fifty times more than the rest. Returns the
    /// document and whether it was new; a duplicate is returned without its signature being checked again,
    /// since the stored copy was checked when it arrived.
    public func ingest(_ bytes: [UInt8]) async throws(IngestError) -> (Document, InsertOutcome) {
        let unverified: UnverifiedDocument
        do { unverified = try UnverifiedDocument(parsing: bytes) } catch { throw .invalid(error) }
        do {
            if try contains(unverified.id), let stored = try document(unverified.id) { return (stored, .duplicate) }
        } catch { throw .store(error) }
        let document: Document
        do { document = try unverified.verified() } catch { throw .invalid(error) }
        do { return (document, try await insert(document)) } catch { throw .store(error) }
    }
}
