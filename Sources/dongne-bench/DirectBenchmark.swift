import CSodium
import Dongne
import DongneStore
import Foundation

/// `dongne-bench direct`: what direct messages cost (PROTOCOL.md §1.8), each beside its limit measured in the
/// same run:
///
/// - trial decryption of envelopes sealed to others, against raw `crypto_box_seal_open` failures with the same
///   keys (target ≥ 0.8);
/// - one hop over loopback, `send` on A to the conversation listener's callback on B, against a channel
///   message's one hop between the same nodes (target ≤ 1.2 at p50 and p99);
/// - two stores holding the same 100,000 envelopes reconcile the space in one round trip and ≤ 1 KiB;
/// - sealing and opening a 4 MiB photo (§1.8, *Photos*), against raw XChaCha20-Poly1305 and BLAKE2b over the same
///   segments (what the format cannot do without: encrypt every byte once and name every chunk), and the stamp
///   a 300 KiB photo's envelope asks on the default network.
enum DirectBenchmark {
    static func run() async throws -> Bool {
        let trial = try trialDecryption(count: 20_000)
        let delivery = try await oneHop(count: 1_000)
        let sync = try await inSync(count: 100_000)
        let photo = try photos(bytes: 4 << 20)
        return trial && delivery && sync && photo
    }

    // MARK: Photos

    static func photos(bytes: Int) throws -> Bool {
        var generator = SystemRandomNumberGenerator()
        let photo = (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let names = (0..<BlobChunk.count(forSize: bytes)).map {
            BlobChunk.name(of: Array(photo[BlobChunk.range($0, inBlobOf: bytes)]))
        }
        let manifest = try BlobManifest(
            mediaType: "image/jpeg", size: bytes, chunks: names, width: 4_000, height: 3_000, thumbnail: [1])
        let key = SealedPhoto.newKey()
        var sealed: (manifest: BlobManifest, chunks: [[UInt8]])?
        let sealing = try Measure.rateSync(count: bytes) { sealed = try SealedPhoto.seal(photo, manifest: manifest, key: key) }
        guard let sealed else { throw BenchmarkError("nothing sealed") }
        var opened: (manifest: BlobManifest, bytes: [UInt8])?
        let opening = Measure.rateSync(count: bytes) { opened = SealedPhoto.open(sealed.chunks, key: key) }
        guard opened?.bytes == photo else { throw BenchmarkError("the photo did not open to its bytes") }
        let segment = SealedPhoto.segmentBytes
        let nonce = [UInt8](repeating: 0, count: 24)
        var ciphertext = [UInt8](repeating: 0, count: BlobLimits.chunkBytes)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt64 = 0
        let raw = Measure.rateSync(count: bytes) {
            photo.withUnsafeBufferPointer { buffer in
                for start in stride(from: 0, to: bytes, by: segment) {
                    let count = min(segment, bytes - start)
                    crypto_aead_xchacha20poly1305_ietf_encrypt(
                        &ciphertext, &length, buffer.baseAddress! + start, UInt64(count), nil, 0, nil, nonce, key)
                    crypto_generichash(&digest, 32, ciphertext, length, nil, 0)
                }
            }
        }
        // One stamp's time is a draw from a geometric law: the rate of hashes, measured over many small stamps,
        // says what a stamp costs on average.
        let probes = 64, probeStrength = 16
        let stampStart = ContinuousClock.now
        for _ in 0..<probes { _ = IdentityStamp.mine(for: SigningKey.generate().publicKey, strength: probeStrength) }
        let hashes = Double(probes) * Double(1 << probeStrength) / Measure.seconds(ContinuousClock.now - stampStart)
        let strength = DirectSpace.envelopeStampStrength(
            required: IdentityStamp.defaultRequiredStrength, photoSize: 300 << 10)
        let stamp = Double(1 << strength) / hashes
        Measure.report("seal a 4 MiB photo", megabytesPerSecond(sealing))
        Measure.report("open it (decrypt, check every plain chunk)", megabytesPerSecond(opening))
        Measure.report("raw XChaCha20-Poly1305 + BLAKE2b per segment", megabytesPerSecond(raw))
        Measure.report("stamp hashes, one core", Measure.perSecond(hashes))
        Measure.report(
            "300 KiB photo's envelope stamp (strength \(strength)), mean, one core", String(format: "%.1f s", stamp))
        let sealRatio = Measure.ratio("seal / raw", sealing / raw, atLeast: 0.75)
        let openRatio = Measure.ratio("open / raw", opening / raw, atLeast: 0.75)
        return sealRatio && openRatio
    }

    private static func megabytesPerSecond(_ rate: Double) -> String { String(format: "%.0f MB/s", rate / 1e6) }

    // MARK: Trial decryption

    static func trialDecryption(count: Int) throws -> Bool {
        let me = SigningKey.generate()
        let boxes = try (0..<count).map { _ -> SealedBox in
            let author = SigningKey.generate(), recipient = SigningKey.generate()
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: recipient.publicKey, content: .text("안녕하세요, 내일 봐요"))),
                created: 1_764_400_000_000, by: author)
            guard case .sealed(let box) = try SealedEnvelope.seal(
                inner, from: author, to: recipient.publicKey, wrapper: .generate(), at: 1_764_400_000_000).body
            else { throw BenchmarkError("not an envelope") }
            return box
        }
        let key = DirectMessageKey(me)
        var opened = 0
        let ours = Measure.rateSync(count: count) {
            for box in boxes where key.open(box) != .notForThisKey { opened += 1 }
        }
        let (curvePublic, curveSecret) = curveKeys(of: me)
        var output = [UInt8](repeating: 0, count: DirectSpace.paddedSizes.last!)
        var failures = 0
        let raw = Measure.rateSync(count: count) {
            for box in boxes where crypto_box_seal_open(&output, box.box, UInt64(box.box.count), curvePublic, curveSecret) != 0 {
                failures += 1
            }
        }
        let (sealing, opening) = try cryptoOnTheWay(count: 2_000)
        Measure.report("on the way, sender: sign, seal (prepared ahead), sign", ListenerBenchmark.percentiles(sealing))
        Measure.report("on the way, recipient: open, check authenticator", ListenerBenchmark.percentiles(opening))
        Measure.report("envelopes sealed to others, tried", "\(count) (\(opened) opened)")
        Measure.report("trial decryption (DirectMessageKey.open)", Measure.perSecond(ours))
        Measure.report("raw crypto_box_seal_open failures, same keys", Measure.perSecond(raw))
        Measure.report("3,000 envelopes a day cost, one core", String(format: "%.0f ms", 3_000 / ours * 1_000))
        return Measure.ratio("trial decryption / raw failures", ours / raw, atLeast: 0.8) && opened == 0
            && failures == count * 3
    }

    /// The cryptography on a direct message's way, as a node does it: the sender signs the inner document, seals
    /// it with a seal prepared after the previous message (its Diffie-Hellman done) and signs the envelope; the
    /// recipient opens it (one Diffie-Hellman), checks the inner document's authenticator (its conversation key
    /// computed once) and shows the message, and checks the envelope's and the inner document's signatures right
    /// after.
    static func cryptoOnTheWay(count: Int) throws -> (sealing: [Double], opening: [Double]) {
        let author = SigningKey.generate(), recipient = SigningKey.generate()
        let key = DirectMessageKey(recipient)
        var sealing: [Double] = [], opening: [Double] = []
        let sealingRecipient = SealingRecipient(recipient.publicKey, from: DirectMessageKey(author))!
        for index in 0..<count {
            let prepared = PreparedSeal(kit: EnvelopeKit(wrapper: .generate()), recipient: sealingRecipient)!
            let start = ContinuousClock.now
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: recipient.publicKey, content: .text("안녕하세요 \(index)"))),
                created: 1_764_400_000_000, by: author)
            let envelope = try SealedEnvelope.seal(inner, with: prepared, at: 1_764_400_000_000)
            let sealed = ContinuousClock.now
            guard case .sealed(let box) = try UnverifiedDocument(parsing: envelope.bytes).body,
                case .direct = key.open(box, signature: .deferred)
            else { throw BenchmarkError("the envelope did not open") }
            let opened = ContinuousClock.now
            sealing.append(Measure.seconds(sealed - start))
            opening.append(Measure.seconds(opened - sealed))
        }
        return (sealing, opening)
    }

    private static func curveKeys(of key: SigningKey) -> ([UInt8], [UInt8]) {
        var publicKey = [UInt8](repeating: 0, count: 32), secretKey = [UInt8](repeating: 0, count: 64)
        crypto_sign_seed_keypair(&publicKey, &secretKey, key.seedBytes)
        var curvePublic = [UInt8](repeating: 0, count: 32), curveSecret = [UInt8](repeating: 0, count: 32)
        _ = crypto_sign_ed25519_pk_to_curve25519(&curvePublic, publicKey)
        crypto_sign_ed25519_sk_to_curve25519(&curveSecret, secretKey)
        return (curvePublic, curveSecret)
    }

    // MARK: One hop

    /// The pause between one message's arrival and the next one's sending.
    static let gap: Duration = .milliseconds(10)

    static func oneHop(count: Int) async throws -> Bool {
        let directories = (0..<2).map { _ in NSTemporaryDirectory() + "dongne-bench-direct-" + UUID().uuidString }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        var configurations = ["a", "b"].enumerated().map { index, name in
            Configuration.bench(dataDirectory: directories[index], displayName: name, listenPort: 0)
        }
        for index in configurations.indices { configurations[index].directHoldBack = .zero ... .zero }
        let a = try await Node.start(configurations[0])
        let b = try await Node.start(configurations[1])
        let channelA = try await a.join("서울특별시")
        let channelB = try await b.join("서울특별시")
        try await b.connect(to: a.listeningAddress!.replacingOccurrences(of: "0.0.0.0", with: "127.0.0.1"))
        let text = String(repeating: "가", count: 70)

        let channelArrivals = Arrivals()
        let channelListener = try channelB.messages.order(by: .created).limit(toLast: 1).addSnapshotListener { _, _ in
            channelArrivals.record()
        }
        defer { channelListener.remove() }
        let directArrivals = Arrivals()
        let directListener = b.conversation(with: a.publicKey).messages.limit(toLast: 1).addSnapshotListener { _, _ in
            directArrivals.record()
        }
        defer { directListener.remove() }
        try await channelArrivals.wait(for: 1)
        try await directArrivals.wait(for: 1)
        let toB = a.conversation(with: b.publicKey)
        // Interleaved, one of each in turn, so that both meet the same machine.
        var channel: [Double] = [], direct: [Double] = []
        for index in 0..<(count + 50) {
            let viaChannel = try await hop(arrivals: channelArrivals) { try await channelA.send(.text("\(text) \(index)")) }
            let viaDirect = try await hop(arrivals: directArrivals) { try await toB.send("\(text) \(index)") }
            guard index >= 50 else { continue }  // warm-up: sessions, datagram routes, caches, prepared seals
            channel.append(viaChannel)
            direct.append(viaDirect)
        }

        Measure.report("one hop, channel message: send on A → listener on B", ListenerBenchmark.percentiles(channel))
        Measure.report("one hop, direct message: send on A → listener on B", ListenerBenchmark.percentiles(direct))
        let (c, d) = (channel.sorted(), direct.sorted())
        let p50 = Measure.ratio("direct / channel, p50", d[d.count / 2] / c[c.count / 2], atMost: 1.2)
        let p99 = Measure.ratio("direct / channel, p99", d[d.count * 99 / 100] / c[c.count * 99 / 100], atMost: 1.2)
        await b.stop()
        await a.stop()
        return p50 && p99
    }

    /// The time from `send` to the next listener callback, then a pause of ``gap``: a chat's pace, at which
    /// neither kind waits behind batches its peer has not acknowledged yet (gossip's flush, PROTOCOL.md §2.4) — a
    /// direct message's `send` returns sooner than a channel message's, whose commit may wait a few milliseconds,
    /// so back to back they would not be sent at the same pace.
    private static func hop(arrivals: Arrivals, _ send: () async throws -> Void) async throws -> Double {
        let before = arrivals.count
        let start = ContinuousClock.now
        try await send()
        try await arrivals.wait(for: before + 1)
        let time = Measure.seconds(arrivals.last! - start)
        try await Task.sleep(for: gap)
        return time
    }

    // MARK: In sync

    static func inSync(count: Int) async throws -> Bool {
        let now: UInt64 = 1_764_400_000_000
        var envelopes: [Document] = []
        envelopes.reserveCapacity(count)
        for index in 0..<count {
            let author = SigningKey.generate(), recipient = SigningKey.generate()
            let inner = try Document.sign(
                .direct(DirectMessage(recipient: recipient.publicKey, content: .text("메시지 \(index)"))),
                created: now, by: author)
            // Spread over the retention, as a month of mail is.
            let sealedAt = now - UInt64.random(in: 0..<DirectSpace.retention)
            envelopes.append(
                try SealedEnvelope.seal(inner, from: author, to: recipient.publicKey, wrapper: .generate(), at: sealedAt))
        }
        var items: [[NegentropyItem]] = []
        for _ in 0..<2 {
            let directory = NSTemporaryDirectory() + "dongne-bench-space-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try Store(path: directory + "/dongne.sqlite")
            for start in stride(from: 0, to: count, by: 1_000) {
                _ = try await store.insert(Array(envelopes[start..<min(count, start + 1_000)]))
            }
            items.append(try store.reconciliationItems(in: DirectSpace.id))
            store.close()
        }
        var first = Negentropy(items: items[0])
        var second = Negentropy(items: items[1])
        let opening = first.initiate()
        let answer = try second.reconcile(opening).reply!
        let finished = try first.reconcile(answer).reply == nil
        Measure.report("direct-message space in sync: envelopes", "\(items[0].count) on each side")
        Measure.report("in sync: round trips", finished ? "1" : "more than 1")
        let bytes = Measure.ratio("in sync: bytes exchanged", Double(opening.count + answer.count), atMost: 1_024)
        return finished && bytes && items[0].count == count
    }
}
