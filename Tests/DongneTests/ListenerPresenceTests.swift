import DongneCore
import DongneSystem
import Synchronization
import Testing

@testable import Dongne

/// `ListenerHub.hasListeners(in:)`, which a local write asks before it wakes the node's loop to show itself:
/// only a listener that could see the write counts.
@Suite struct ListenerPresenceTests {
    @Test func onlyAQueryOfTheChannelAWaitingListenerOrTheDirectSpaceCounts() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let elsewhere = try ChannelName(normalizing: "부산광역시").id
        let hub = test.node.hub
        #expect(await !hub.hasListeners(in: [seoul.id]), "nobody listens yet")
        #expect(await hub.hasListeners(in: [DirectSpace.id]), "direct messages also refresh the conversation list")

        let recorder = Recorder<MessageSnapshot>()
        let query = seoul.messages.order(by: .created).limit(toLast: 5)
        let registration = try query.addSnapshotListener(recorder.callback)
        #expect(await hub.hasListeners(in: [seoul.id]), "waiting to be registered, or registered")
        #expect(await recorder.waitFor(1))
        #expect(await hub.hasListeners(in: [seoul.id, elsewhere]))
        #expect(await !hub.hasListeners(in: [elsewhere]), "a query of another channel does not count")

        registration.remove()
        #expect(await ReconnectionTests.eventually { await !hub.hasListeners(in: [seoul.id]) }, "removed")
    }

    @Test func aListenerNotYetRegisteredCounts() async throws {
        let test = try await TestNode.start()
        defer { test.stop() }
        let seoul = try test.node.channel(named: "서울특별시")
        let hub = test.node.hub
        // Added and asked within one piece of the loop's work, before the hub can register the listener.
        let answer = Mutex<(waiting: Bool, registration: ListenerRegistration?)>((false, nil))
        test.node.loop.execute {
            let registration = try? seoul.messages.addSnapshotListener { _, _ in }
            let waiting = hub.assumeIsolated { $0.hasListeners(in: [seoul.id]) }
            answer.withLock { $0 = (waiting, registration) }
        }
        #expect(await ReconnectionTests.eventually { answer.withLock { $0.registration != nil } })
        #expect(answer.withLock { $0.waiting }, "a listener waiting to be registered counts")
        answer.withLock { $0.registration?.remove() }
    }
}
