import Dongne
import DongneCore
import Foundation

/// Where a late joiner's fetch waits (`dongne-bench sync trace`): the joiner's ``DeliveryTrace`` times each
/// document when its batch was routed to the checks, when its signature was checked, and when the store said it
/// is durable (only then is its batch acknowledged, and only acknowledgements let the source send more).
///
/// Printed per tenth of a second of the fetch: how many documents waited for their check and how many checked
/// ones waited for the store. A tenth in which none waited for a check is one in which the checks, which should
/// keep every core busy, had nothing to do; if the store's backlog was large then, the store held the fetch back.
struct FetchPipeline {
    /// Per document, in nanoseconds after the fetch began: routed to its check, checked, durable.
    let documents: [(routed: Int64, checked: Int64, stored: Int64)]

    /// The stages of every document in `ids` that reached all three in `trace`, the fetch having begun at `began`
    /// (``DeliveryTrace/now()``).
    init(_ trace: DeliveryTrace, ids: [DocumentID], began: Int64) {
        documents = ids.compactMap { id in
            let times = trace.times(of: id)
            guard let routed = times[.routed], let checked = times[.checked], let stored = times[.stored] else {
                return nil
            }
            return (routed - began, checked - began, stored - began)
        }
    }

    /// Prints the figures.
    func report() {
        guard !documents.isEmpty else { return Measure.report("traced documents", "none") }
        let waits = documents.map { $0.stored - $0.checked }.sorted()
        let milliseconds = { (value: Int64) in String(format: "%.0f ms", Double(value) / 1e6) }
        Measure.report("traced documents", "\(documents.count)")
        Measure.report(
            "checked -> durable, p50 / p90 / most",
            [waits[waits.count / 2], waits[waits.count * 9 / 10], waits[waits.count - 1]].map(milliseconds)
                .joined(separator: " / "))
        let tenth: Int64 = 100_000_000
        let end = max(tenth, documents.map(\.stored).max()!)
        var (starved, tenths, largestBacklog) = (0, 0, 0)
        for index in 1...Int(end / tenth) {
            let moment = Int64(index) * tenth
            let checking = documents.count { $0.routed <= moment && moment < $0.checked }
            let storing = documents.count { $0.checked <= moment && moment < $0.stored }
            tenths += 1
            if checking == 0 { starved += 1 }
            largestBacklog = max(largestBacklog, storing)
        }
        Measure.report("tenths of a second with nothing waiting for a check", "\(starved) of \(tenths)")
        Measure.report("most checked documents waiting for the store at once", "\(largestBacklog)")
    }
}
