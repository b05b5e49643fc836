import DongneCore
import DongneStore
import Foundation

// A helper the store's crash-safety test drives as a separate process (it is killed with SIGKILL mid-write).
//
//   dongne-ingest-probe generate FILE COUNT   signs COUNT deterministic messages into FILE (length-prefixed)
//   dongne-ingest-probe ingest FILE STORE     ingests FILE into the store at STORE, printing "ack N" for every
//                                             document N once its store call has returned and "error N: …" for
//                                             every one that failed, then "done", the integrity check and the
//                                             number of stored documents

/// Documents to ingest at once: enough to fill group-commit batches.
let inFlight = 256

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("dongne-ingest-probe: \(message)\n".utf8))
    exit(2)
}

func generate(to path: String, count: Int) throws {
    let key = SigningKey(seed: [UInt8](repeating: 0x42, count: 32))!
    let channel = try ChannelName(normalizing: "서울특별시").id
    var output = [UInt8]()
    for index in 0..<count {
        let body = DocumentBody.message(
            Message(channel: channel, senderName: "probe", content: .text("message \(index)")))
        let bytes = try Document.sign(body, created: 1_764_400_000_000 + UInt64(index), by: key).bytes
        output += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
    }
    try Data(output).write(to: URL(fileURLWithPath: path))
}

func readDocuments(_ path: String) -> [[UInt8]] {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    let bytes = [UInt8](data)
    var documents: [[UInt8]] = []
    var position = 0
    while position + 2 <= bytes.count {
        let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
        documents.append(Array(bytes[(position + 2)..<(position + 2 + length)]))
        position += 2 + length
    }
    return documents
}

func ingest(_ documents: [[UInt8]], into store: Store) async {
    await withTaskGroup(of: String.self) { group in
        var next = 0
        func startNext() {
            let index = next
            next += 1
            group.addTask {
                do {
                    _ = try await store.ingest(documents[index])
                    return "ack \(index)\n"
                } catch {
                    return "error \(index): \(error)\n"
                }
            }
        }
        while next < min(inFlight, documents.count) { startNext() }
        while let line = await group.next() {
            FileHandle.standardOutput.write(Data(line.utf8))
            if next < documents.count { startNext() }
        }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch (arguments.first, arguments.count) {
case ("generate", 3):
    guard let count = Int(arguments[2]) else { fail("COUNT must be a number") }
    do { try generate(to: arguments[1], count: count) } catch { fail("\(error)") }
case ("ingest", 3):
    let documents = readDocuments(arguments[1])
    do {
        // The probe tests durability, not admission: one unstamped key writes everything.
        let store = try Store(
            path: arguments[2], admission: AdmissionPolicy(requiredStampStrength: 0, authorQuotaBytes: .max))
        await ingest(documents, into: store)
        store.close()
        print("done")
        print("integrity \(try store.integrityCheck())")
        print("count \(try store.documentCount())")
    } catch { fail("\(error)") }
default:
    fail("usage: dongne-ingest-probe generate FILE COUNT | ingest FILE STORE")
}
