import Dongne
import DongneCore
import DongneStore
import Foundation
import Testing

/// A node's own identity stamp (PROTOCOL.md §1.13): mined once at the first start and kept, and strengthened
/// before the user's posts in a channel outgrow what it lets peers store.
@Suite struct StampedIdentityTests {
    static func configuration(_ directory: String, strength: Int, quota: Int) -> Configuration {
        var configuration = Configuration(dataDirectory: directory, displayName: "민지")
        configuration.admission = AdmissionPolicy(requiredStampStrength: strength, authorQuotaBytes: quota)
        return configuration
    }

    @Test func theFirstStartMinesAStampOfTheRequiredStrengthAndLaterStartsKeepIt() async throws {
        let directory = NSTemporaryDirectory() + "dongne-stamp-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = Self.configuration(directory, strength: 14, quota: AdmissionPolicy.defaultAuthorQuotaBytes)
        let first = try await Node.start(configuration)
        let stamp = try #require(first.identity.stamp)
        #expect(stamp.strength(for: first.publicKey) >= 14)
        let channel = try await first.join("서울특별시")
        let id = try await channel.send(.text("안녕하세요"))
        #expect(try first.store.document(id)?.stamp == stamp, "what the node signs carries the stamp")
        await first.stop()
        let second = try await Node.start(configuration)
        #expect(second.identity.stamp == stamp)
        await second.stop()
    }

    @Test func postsPastHalfTheQuotaStrengthenTheStampSoPeersStoreThemAll() async throws {
        // A quota of 2,000 bytes at strength 8: a dozen messages, then each bit doubles it.
        let policy = AdmissionPolicy(requiredStampStrength: 8, authorQuotaBytes: 2_000)
        // The first stamp of at least 8 bits is stronger by chance now and then (4 bits more, one key in 16, and its
        // quota of 32,000 bytes or more outgrows the test's 60 posts of about 300 bytes): a fresh identity until it
        // is not, a few tries at most.
        var started: Node?
        var directories: [String] = []
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        for _ in 0..<5 where started == nil {
            let directory = NSTemporaryDirectory() + "dongne-stamp-" + UUID().uuidString
            directories.append(directory)
            var configuration = Self.configuration(directory, strength: 8, quota: 2_000)
            configuration.clock = .stepping(from: 1_764_400_000_000)
            let candidate = try await Node.start(configuration)
            if candidate.identity.stampStrength <= 11 { started = candidate } else { await candidate.stop() }
        }
        let node = try #require(started)
        let channel = try await node.join("서울특별시")
        let startingStrength = node.identity.stampStrength
        var ids: [DocumentID] = []
        for index in 0..<60 { ids.append(try await channel.send(.text("글 \(index) " + String(repeating: "가", count: 40)))) }
        let documents = try ids.map { try #require(try node.store.document($0)) }
        let bytes = documents.reduce(0) { $0 + $1.bytes.count }
        #expect(bytes > policy.quota(forStrength: startingStrength), "the posts outgrew the first stamp")
        #expect(node.identity.stampStrength > startingStrength)
        await node.stop()
        // A peer with the same rules takes every one of them.
        let peerDirectory = NSTemporaryDirectory() + "dongne-stamp-peer-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: peerDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: peerDirectory) }
        let peer = try Store(path: peerDirectory + "/dongne.sqlite", admission: policy)
        let results = await peer.ingest(documents.map(\.bytes))
        let declined = results.compactMap { result -> String? in
            if case .failure(let error) = result { "\(error)" } else { nil }
        }
        #expect(declined.isEmpty)
        peer.close()
    }
}
