import DongneCore

/// Whose a stored blob is (the `own` column of the blob file): what decides whether it is evicted, and when it
/// goes.
enum BlobHolder: Int64 {
    /// Someone else's photo: evicted least recently used first, over the budget.
    case others = 0
    /// The user's own: kept until the user deletes it.
    case own = 1
    /// A sealed photo of the direct-message space: kept while an envelope stored here names it
    /// (``Store/sweepSpacePhotos(keeping:)``), never evicted, and counted in the space's cap, not the budget.
    case space = 2

    /// The holder of `manifest`, stored as the user's own or not: a sealed manifest is always the space's.
    init(_ manifest: BlobManifest, own: Bool) {
        self = manifest.isSealed ? .space : own ? .own : .others
    }
}
