import DongneStore
import Foundation
import Testing
import DongneTestSupport
import DongneSystem

@testable import Dongne

/// Photos from a file on one node to the bytes on another (PROTOCOL.md part 3), with real JPEGs made by the
/// `vips` tool and their metadata written and read by `exiftool`.
@Suite(.serialized) struct PhotoTests {
    @Test func aPhotoArrivesIntactOnAnotherNodeUprightAndWithoutItsGPS() async throws {
        let fixture = try PhotoFixture.jpeg(width: 640, height: 480, gps: true, orientation: 6)
        defer { fixture.remove() }
        #expect(try PhotoFixture.exif(fixture.path)["GPSLatitude"] != nil, "the fixture carries GPS")
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        let channelA = try await a.node.join("서울특별시")
        _ = try await b.node.join("서울특별시")
        let progress = Locked<[PhotoSendingProgress]>([])
        let id = try await channelA.send(photo: fixture.path) { step in progress.update { $0.append(step) } }
        #expect(progress.get().first == .preparing && progress.get().last == .sending)
        let sent = try #require(try a.node.store.document(id))
        guard case .message(let message) = sent.body, case .photo(let hash) = message.content else {
            Issue.record("not a photo message")
            return
        }
        #expect(a.node.photoSnapshot(hash).availability == .available, "the sender's own photo is there at once")
        #expect(try await PhotoFixture.waitUntilAvailable(hash, on: b.node))
        let original = try a.node.photo(hash)
        #expect(try b.node.photo(hash) == original, "the same bytes on both nodes")
        let info = try #require(b.node.photoSnapshot(hash).info)
        #expect((info.width, info.height) == (480, 640), "turned upright by its EXIF orientation")
        #expect(info.mediaType == "image/jpeg" && info.size == original.count && !info.thumbnail.isEmpty)
        let saved = fixture.path + ".received.jpg"
        defer { try? FileManager.default.removeItem(atPath: saved) }
        try b.node.savePhoto(hash, to: saved)
        let tags = try PhotoFixture.exif(saved)
        #expect(tags.keys.filter { $0.hasPrefix("GPS") }.isEmpty, "no GPS tag left: \(tags.keys.sorted())")
        #expect(tags["Orientation"] == nil && tags["ImageWidth"] as? Int == 480)
    }

    /// Sentence 11 of the listener contract: a photo's availability is metadata.
    @Test func availabilityReachesOnlyListenersOfMetadataChanges() async throws {
        let fixture = try PhotoFixture.jpeg(width: 320, height: 240, gps: false)
        defer { fixture.remove() }
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        let channelA = try await a.node.join("서울특별시")
        let channelB = try await b.node.join("서울특별시")
        let plain = Recorder<MessageSnapshot>(), metadata = Recorder<MessageSnapshot>()
        let one = try channelB.messages.addSnapshotListener(plain.callback)
        let two = try channelB.messages.addSnapshotListener(includeMetadataChanges: true, metadata.callback)
        defer { one.remove(); two.remove() }
        try await channelA.send(photo: fixture.path)
        #expect(await metadata.waitFor(2))
        #expect(await plain.waitFor(2))
        let available = await ReconnectionTests.eventually(seconds: 60) {
            metadata.last?.documents.first?.photo?.availability == .available
        }
        #expect(available, "the metadata listener sees the photo become available")
        let changes = metadata.all.flatMap(\.documentChanges).map(\.type)
        #expect(changes.first == .added && changes.dropFirst().contains(.modified) && !changes.contains(.removed))
        #expect(plain.all.flatMap(\.documentChanges).allSatisfy { $0.type == .added }, "no change of data")
        #expect(plain.last?.documents.count == 1)
    }

    @Test func aFileThatIsNotAPhotoIsRefusedWithAClearError() async throws {
        let node = try await TestNode.start()
        defer { node.stop() }
        let channel = try await node.node.join("서울특별시")
        let text = node.directory + "/notes.txt"
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: text))
        await #expect(throws: DongneError.photo(.notAnImage(path: text))) { try await channel.send(photo: text) }
        await #expect(throws: DongneError.photo(.unreadable(path: "/nonexistent.jpg", reason: "no such file"))) {
            try await channel.send(photo: "/nonexistent.jpg")
        }
        #expect(try node.node.store.blobUsage() == (0, 0), "nothing stored")
    }
}

/// JPEG fixtures and the nodes photo tests run on.
enum PhotoFixture {
    struct File {
        let path: String
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A JPEG of noise made by `vips`, with GPS coordinates and an orientation written by `exiftool`.
    static func jpeg(width: Int, height: Int, gps: Bool, orientation: Int = 1) throws -> File {
        let path = NSTemporaryDirectory() + "dongne-photo-\(UUID().uuidString).jpg"
        try run("/usr/bin/vips", ["gaussnoise", path + "[Q=90]", "\(width)", "\(height)"])
        var tags = ["-overwrite_original", "-n", "-Orientation=\(orientation)"]
        if gps {
            tags += [
                "-GPSLatitude=37.5796", "-GPSLatitudeRef=N", "-GPSLongitude=126.9770", "-GPSLongitudeRef=E",
                "-Make=dongne-test-phone",
            ]
        }
        try run("/usr/bin/exiftool", tags + [path])
        return File(path: path)
    }

    /// Every tag `exiftool` reads from a file, by name, numbers as numbers.
    static func exif(_ path: String) throws -> [String: Any] {
        let output = try run("/usr/bin/exiftool", ["-j", "-n", path])
        let parsed = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        return parsed?.first ?? [:]
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw DongneError.networkUnavailable("\(tool) \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Two nodes over loopback: the first listens, the second dials it; both once their session is up.
    static func connectedPair() async throws -> (TestNode, TestNode) {
        let a = try await TestNode.start(name: "민지", listen: true)
        let b = try await TestNode.start(name: "준호")
        try await b.node.connect(to: try #require(a.node.listeningAddress))
        return (a, b)
    }

    /// Waits for a photo to be available on a node; false after 60 seconds without.
    static func waitUntilAvailable(_ hash: BlobHash, on node: Node) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await availability in node.photoProgress(hash) where availability == .available { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
