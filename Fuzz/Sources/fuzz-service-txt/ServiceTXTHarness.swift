import DongneCore
import FuzzSupport

/// DNS-SD TXT records (`ServiceTXT.parse` and `check`), as Avahi hands them over from any host on the LAN: a
/// record that parses re-encodes, keys with values, to a record that parses to the same pairs; `check` accepts
/// exactly the records whose `v` is this version.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServiceTXT(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(data, count)
    let record = input.rest()
    let accepted = (try? ServiceTXT.check(record)) != nil
    guard let pairs = try? ServiceTXT.parse(record) else {
        expect(!accepted, "check accepted a record that does not parse")
        return 0
    }
    let isThisVersion = pairs["v"] == .some(.some(ServiceTXT.version))
    expect(accepted == isThisVersion, "check said \(accepted) for \(pairs)")
    // A TXT string holds at most 255 bytes: only pairs that fit can be written again.
    let valued = pairs.compactMapValues { $0 }.filter { $0.key.utf8.count + 1 + $0.value.utf8.count <= 255 }
    let again = try? ServiceTXT.parse(ServiceTXT.encode(valued))
    expect(again == valued.mapValues { Optional($0) }, "parse → encode → parse changed \(valued)")
    return 0
}
