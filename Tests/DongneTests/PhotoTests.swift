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

    /// Sentence 4 of the listener contract for photos: the sender's listeners see the message at once.
    @Test func theSendersListenersSeeAPlaceholderWithTheFileAtOnceThenTheMessage() async throws {
        let fixture = try PhotoFixture.jpeg(width: 1200, height: 900, gps: true)
        defer { fixture.remove() }
        let node = try await TestNode.start()
        defer { node.stop() }
        let channel = try await node.node.join("서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try channel.messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        let seenWhilePreparing = Locked<[PhotoSnapshot]>([])
        let id = try await channel.send(photo: fixture.path) { step in
            if step == .sending { seenWhilePreparing.set(recorder.all.flatMap(\.documents).compactMap(\.photo)) }
        }
        let placeholder = try #require(seenWhilePreparing.get().first, "shown before the photo was ready")
        #expect(placeholder.availability == .preparing && placeholder.localFile == fixture.path)
        #expect(recorder.all.dropFirst().first?.documents.first?.metadata.hasPendingWrites == true)
        let last = try #require(recorder.last)
        #expect(last.documents.map(\.id) == [id], "the placeholder is replaced by the message")
        #expect(last.documents.first?.photo?.availability == .available)
        #expect(last.documents.first?.photo?.localFile == nil)
    }

    @Test func aPhotoThatCannotBePreparedTakesItsPlaceholderAway() async throws {
        let node = try await TestNode.start()
        defer { node.stop() }
        let channel = try await node.node.join("서울특별시")
        let recorder = Recorder<MessageSnapshot>()
        let registration = try channel.messages.addSnapshotListener(recorder.callback)
        defer { registration.remove() }
        #expect(await recorder.waitFor(1))
        let text = node.directory + "/notes.txt"
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: text))
        await #expect(throws: DongneError.photo(.notAnImage(path: text))) { try await channel.send(photo: text) }
        #expect(recorder.all.contains { $0.documents.first?.photo?.availability == .preparing })
        #expect(recorder.last?.documents.isEmpty == true, "gone again")
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

    @Test func aNodeRestartedMidFetchAsksOnlyForTheChunksItLacks() async throws {
        let fixture = try PhotoFixture.jpeg(width: 1600, height: 1200, gps: false)
        defer { fixture.remove() }
        let a = try await TestNode.start(name: "민지", listen: true)
        defer { a.stop() }
        let id = try await a.node.join("서울특별시").send(photo: fixture.path)
        guard case .message(let message)? = try a.node.store.document(id)?.body, case .photo(let hash) = message.content
        else {
            Issue.record("not a photo message")
            return
        }
        let manifest = try #require(try a.node.store.blobManifest(hash))
        let count = manifest.chunks.count
        #expect(count >= 20)
        // What a fetch stopped half-way leaves in a store: the manifest and the first half of the chunks.
        let directory = NSTemporaryDirectory() + "dongne-resume-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try Store(path: directory + "/dongne.sqlite")
        try await PhotoFixture.awaitStore { store.submitBlobManifest(manifest, at: 1, completion: $0) }
        for index in 0..<count / 2 {
            let chunk = try #require(try a.node.store.blobChunk(hash, index: index))
            try await PhotoFixture.awaitStore { store.submitBlobChunk(hash, index: index, bytes: chunk, completion: $0) }
        }
        store.close()
        let sentBefore = await a.node.networkTraffic().sent
        var configuration = Configuration.testing(
            dataDirectory: directory, displayName: "준호", peers: [try #require(a.node.listeningAddress)])
        configuration.deferredCommitDelay = .milliseconds(4)
        let b = TestNode(node: try await Node.start(configuration), directory: directory)
        defer { b.stop() }
        #expect(try await PhotoFixture.waitUntilAvailable(hash, on: b.node), "resumed at start, with no message")
        #expect(try b.node.photo(hash) == a.node.photo(hash))
        let sent = await a.node.networkTraffic().sent - sentBefore
        let missing = count - count / 2
        let missingBytes = manifest.size - (count / 2) * BlobLimits.chunkBytes
        #expect(sent >= missingBytes, "the missing chunks came from the holder")
        #expect(sent < missingBytes + 64 << 10, "and nothing more: \(sent) bytes for \(missing) of \(count) chunks")
    }

    @Test(arguments: [("heic", "image/jpeg"), ("png", "image/png"), ("webp", "image/webp"), ("jpg", "image/jpeg")])
    func everyFormatIsPreparedWithoutItsMetadata(format: String, mediaType: String) throws {
        let jpeg = try PhotoFixture.jpeg(width: 300, height: 200, gps: false)
        defer { jpeg.remove() }
        let source = jpeg.path + ".\(format)"
        defer { try? FileManager.default.removeItem(atPath: source) }
        try PhotoFixture.run("/usr/bin/vips", ["copy", jpeg.path, source + "[strip]"])
        try PhotoFixture.run(
            "/usr/bin/exiftool",
            ["-overwrite_original", "-n", "-GPSLatitude=37.5796", "-GPSLatitudeRef=N", "-Make=dongne-test-phone", source])
        #expect(try PhotoFixture.exif(source)["GPSLatitude"] != nil, "exiftool wrote GPS into the \(format) fixture")
        let folder = NSTemporaryDirectory()
        let prepared = try PreparedPhoto.prepare(source, into: folder)
        defer { try? FileManager.default.removeItem(atPath: prepared.path) }
        #expect(prepared.mediaType == mediaType && (prepared.width, prepared.height) == (300, 200))
        #expect(prepared.thumbnail.count <= BlobLimits.maximumThumbnailBytes && prepared.thumbnail.starts(with: [0xff, 0xd8]))
        let tags = try PhotoFixture.exif(prepared.path)
        #expect(tags.keys.filter { $0.hasPrefix("GPS") }.isEmpty && tags["Make"] == nil, "\(tags.keys.sorted())")
    }

    @Test func anAuthorsPhotosPastTheirAutomaticShareWaitUntilAskedFor() async throws {
        let a = try await TestNode.start(name: "민지", listen: true)
        defer { a.stop() }
        let channelA = try await a.node.join("서울특별시")
        var hashes: [BlobHash] = []
        for index in 0..<3 {
            let fixture = try PhotoFixture.jpeg(width: 500 + index, height: 400, gps: false)
            defer { fixture.remove() }
            let id = try await channelA.send(photo: fixture.path)
            guard case .message(let message)? = try a.node.store.document(id)?.body,
                case .photo(let hash) = message.content
            else { throw DongneError.unknownMessage(id) }
            hashes.append(hash)
        }
        let sizes = hashes.map { a.node.photoSnapshot($0).info?.size ?? 0 }
        // A share that one of the three fits, and no two: whichever arrives first is fetched, the others not.
        let share = sizes.max()! + 1
        #expect(sizes.allSatisfy { 2 * $0 > share }, "\(sizes)")
        let directory = NSTemporaryDirectory() + "dongne-share-" + UUID().uuidString
        let configuration = Configuration.testing(dataDirectory: directory, displayName: "준호")
        let b = TestNode(node: try await Node.start(configuration.withPhotoShare(share)), directory: directory)
        defer { b.stop() }
        _ = try await b.node.join("서울특별시")
        try await b.node.connect(to: try #require(a.node.listeningAddress))
        // Every manifest arrives (size, pixels, thumbnail); one photo is fetched whole, the others wait.
        let settled = await ReconnectionTests.eventually(seconds: 30) {
            hashes.allSatisfy { b.node.photoSnapshot($0).info != nil }
                && hashes.contains { b.node.photoSnapshot($0).availability == .available }
        }
        #expect(settled)
        let waiting = hashes.filter { b.node.photoSnapshot($0).availability == .missing }
        #expect(waiting.count == 2, "\(hashes.map { b.node.photoSnapshot($0).availability })")
        let asked = try #require(waiting.first)
        await b.node.fetchPhoto(asked)
        #expect(try await PhotoFixture.waitUntilAvailable(asked, on: b.node), "asked for, it comes")
        #expect(try b.node.photo(asked) == a.node.photo(asked))
    }

    @Test func anAvatarReachesPeersConnectedThenAndLaterAndSurvivesANewName() async throws {
        let fixture = try PhotoFixture.jpeg(width: 200, height: 200, gps: true)
        defer { fixture.remove() }
        let (a, b) = try await PhotoFixture.connectedPair()
        defer { a.stop(); b.stop() }
        let avatar = try await a.node.setAvatar(photo: fixture.path)
        let arrived = await ReconnectionTests.eventually(seconds: 30) { (try? b.node.avatars()[a.node.publicKey]) == avatar }
        #expect(arrived, "a peer connected when it is set")
        #expect(try await PhotoFixture.waitUntilAvailable(avatar, on: b.node), "and its photo, fetched")
        try await a.node.setDisplayName("민지2")
        #expect(try a.node.avatars()[a.node.publicKey] == avatar, "a new name keeps the avatar")
        let c = try await TestNode.start(name: "지수")
        defer { c.stop() }
        try await c.node.connect(to: try #require(a.node.listeningAddress))
        let later = await ReconnectionTests.eventually(seconds: 30) { (try? c.node.avatars()[a.node.publicKey]) == avatar }
        #expect(later, "a peer that connects later gets the latest profile when its session starts")
        #expect(try await PhotoFixture.waitUntilAvailable(avatar, on: c.node))
        #expect(try c.node.knownAuthors()[a.node.publicKey] == "민지2")
        let saved = fixture.path + ".avatar.jpg"
        defer { try? FileManager.default.removeItem(atPath: saved) }
        try c.node.savePhoto(avatar, to: saved)
        #expect(try PhotoFixture.exif(saved).keys.filter { $0.hasPrefix("GPS") }.isEmpty)
    }

    @Test func aPhotoLargerThanABlobMayBeOncepreparedIsRefusedAndNothingIsStored() async throws {
        // 3,400 × 3,400 random pixels: 34.7 MB that no PNG encoder shrinks.
        let raw = NSTemporaryDirectory() + "dongne-oversize-\(UUID().uuidString).ppm"
        let png = raw + ".png"
        defer { for path in [raw, png] { try? FileManager.default.removeItem(atPath: path) } }
        var generator = SplitMix64(seed: 5)
        var bytes = Array("P6\n3400 3400\n255\n".utf8)
        bytes.reserveCapacity(bytes.count + 3_400 * 3_400 * 3)
        for _ in 0..<(3_400 * 3_400 * 3 / 8) {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: raw))
        try PhotoFixture.run("/usr/bin/vips", ["copy", raw, png + "[compression=0]"])
        let node = try await TestNode.start()
        defer { node.stop() }
        let channel = try await node.node.join("서울특별시")
        await #expect {
            try await channel.send(photo: png)
        } throws: { error in
            guard case DongneError.photo(.tooLarge(let size, let limit)) = error else { return false }
            return size > limit && limit == BlobLimits.maximumBlobBytes
                && "\(error)".contains("the most it may be is 32 MiB: send a smaller or scaled-down copy")
        }
        #expect(try node.node.store.blobUsage() == (0, 0), "nothing stored")
        #expect(try FileManager.default.contentsOfDirectory(atPath: node.directory).allSatisfy { !$0.hasPrefix("prepared-") },
            "the prepared file is gone")
    }

    /// A truncated file is refused with what libvips found, not sent half grey, and nothing prints over the screen.
    @Test func aTruncatedPhotoIsRefusedNotSentHalfGrey() async throws {
        let fixture = try PhotoFixture.jpeg(width: 800, height: 600, gps: false)
        defer { fixture.remove() }
        let truncated = fixture.path + ".truncated.jpg"
        defer { try? FileManager.default.removeItem(atPath: truncated) }
        let bytes = try #require(FileManager.default.contents(atPath: fixture.path))
        try bytes.prefix(5_000).write(to: URL(fileURLWithPath: truncated))
        let node = try await TestNode.start()
        defer { node.stop() }
        let channel = try await node.node.join("서울특별시")
        await #expect {
            try await channel.send(photo: truncated)
        } throws: { error in
            guard case DongneError.photo(.imageFailed(let path, let reason)) = error else { return false }
            return path == truncated && reason.contains("Premature end")
        }
        #expect(try node.node.store.blobUsage() == (0, 0), "nothing stored")
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

extension Configuration {
    /// This configuration with one author's automatic share of photos set to `bytes`.
    func withPhotoShare(_ bytes: Int) -> Configuration {
        var copy = self
        copy.automaticPhotoBytesPerAuthor = bytes
        return copy
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
        let process = SpawnedProcess()
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

    /// Waits for a store write queued with a completion.
    static func awaitStore(
        _ submit: (@escaping @Sendable (Result<Void, StoreError>) -> Void) -> Void
    ) async throws {
        let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: $0) }
        }
        try result.get()
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
