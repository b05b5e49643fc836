import Foundation

// dongne-bench: benchmarks, separate from the tests. Each prints its figures, the physical limit measured in the
// same run, and the ratios the issues set as targets; it exits 1 if a target was missed.
//
//   swift run -c release dongne-bench ingest
//   swift run -c release dongne-bench listeners
//   swift run -c release dongne-bench simulate
//   swift run -c release dongne-bench simulate seeds [forty] SEED…   (the churn run, once per seed)
//   swift run -c release dongne-bench sync          (sync trace: one fetch, traced: where it waited)
//   swift run -c release dongne-bench delivery
//   swift run -c release dongne-bench direct
//   swift run -c release dongne-bench regions
//   swift build -c release && .build/release/dongne-bench local-api   (needs the release dongne beside it)
//   swift run -c release dongne-bench cold-start
//   scripts/bench-lan                 (runs dongne-bench lan-node on the hosts of scripts/lan)

let usage =
    "usage: dongne-bench ingest | listeners | simulate | sync | delivery | direct | regions | local-api | cold-start"
switch CommandLine.arguments.dropFirst().first {
case "ingest":
    let met = try await IngestBenchmark.run()
    exit(met ? 0 : 1)
case "listeners":
    let met = try await ListenerBenchmark.run()
    exit(met ? 0 : 1)
case "simulate":
    let arguments = Array(CommandLine.arguments.dropFirst(2))
    let met =
        arguments.first == "seeds"
        ? ChurnSeedsBenchmark.run(Array(arguments.dropFirst())) : GossipSimulationBenchmark.run()
    exit(met ? 0 : 1)
case "sync":
    let traced = CommandLine.arguments.dropFirst(2).first == "trace"
    let met = try await traced ? SyncBenchmark.runTraced() : SyncBenchmark.run()
    exit(met ? 0 : 1)
case "delivery":
    let met = try await DeliveryBenchmark.run()
    exit(met ? 0 : 1)
case "direct":
    let met = try await DirectBenchmark.run()
    exit(met ? 0 : 1)
case "regions":
    let met = try RegionsBenchmark.run()
    exit(met ? 0 : 1)
case "local-api":
    let met = try await LocalAPIBenchmark.run()
    exit(met ? 0 : 1)
case "cold-start":
    let met = try ColdStartBenchmark.run()
    exit(met ? 0 : 1)
case "cold-start-child":
    try await ColdStartBenchmark.child(Array(CommandLine.arguments.dropFirst(2)))
case "spin":
    BusyProcess.spin(seconds: Double(CommandLine.arguments.last ?? "") ?? 0)
case "lan-node":
    let met = try await LanNode.run(Array(CommandLine.arguments.dropFirst(2)))
    exit(met ? 0 : 1)
case "make-fixture":
    guard let fixture = ThreadFixture.all.first(where: { $0.name == CommandLine.arguments.last }) else { exit(2) }
    try await fixture.make()
default:
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(2)
}
