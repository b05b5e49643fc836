import Dongne
import DongneCore
import DongneStore
import Foundation
import Testing
import DongneSystem
import DongneTestSupport

@Suite struct NodeTests {
    static func temporaryPath() -> String { NSTemporaryDirectory() + "dongne-node-" + UUID().uuidString }

    @Test func aNodeKeepsItsIdentityAndStoreAcrossRestartsInAPrivateFolder() async throws {
        let directory = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = Configuration.testing(dataDirectory: directory + "/nested/data", displayName: "민지")
        let first = try await Node.start(configuration)
        let document = try Document.sign(.profile(Profile(displayName: "민지")), created: 1, by: first.identity)
        _ = try await first.store.insert(document)
        await first.stop()

        let second = try await Node.start(configuration)
        #expect(second.publicKey == first.publicKey)
        #expect(try second.store.document(document.id)?.bytes == document.bytes)
        for (path, expected) in [(configuration.dataDirectory, 0o700), (second.storePath, 0o600)] {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]
            #expect((mode as! NSNumber).intValue == expected, "\(path)")
        }
        await second.stop()
    }
}

/// The `dongne` binary, run as a person would run it.
@Suite struct CommandLineTests {
    static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("dongne").path

    /// Runs the binary with `arguments` to its end, off Swift's pool.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (
        status: Int32, output: String, errors: String
    ) {
        try await offPool { try blockingRun(arguments, environment: environment) }
    }

    private static func blockingRun(_ arguments: [String], environment: [String: String]?) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = REPLProcess.testArguments(arguments)
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    @Test func startingPrintsWhoYouAreAndNeverTheSecret() async throws {
        let directory = NodeTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The first start mines the identity's stamp and says so (at the tests' strength: the default network's
        // takes seconds in a debug build, with this test's thread blocked on the process meanwhile).
        let first = try await Self.run(["--data", directory, "--name", "민지", "--port", "off", "--no-dnssd"])
        #expect(first.status == 0)
        #expect(first.errors == "making a new identity and its stamp (a few seconds, once)…\n")
        let seed = try String(contentsOfFile: directory + "/identity.key", encoding: .utf8).trimmingCharacters(
            in: .newlines)
        let key = SigningKey(seed: Hex.decode(seed)!)!
        #expect(
            first.output == """
                * dongne: you are 민지 (\(key.publicKey.fingerprint.short)); /help lists the commands

                """)
        #expect(!first.output.contains(seed) && !first.errors.contains(seed))
        let second = try await Self.run(["--data", directory, "--port", "off", "--no-dnssd"])
        #expect(second.output.contains("you are 민지 (\(key.publicKey.fingerprint.short))"), "the name is remembered")
        #expect(second.errors.isEmpty, "the stamp is mined once: \(second.errors)")
    }

    @Test func badArgumentsGetOneClearLineAndTheUsage() async throws {
        let unknown = try await Self.run(["--frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.errors.hasPrefix("dongne: unknown option --frobnicate\nusage: dongne"))
        let missing = try await Self.run(["--data"])
        #expect(missing.status == 2)
        #expect(missing.errors.hasPrefix("dongne: --data needs a value\n"))
        let help = try await Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("usage: dongne"))
    }

    /// A person who sets `HOME` (or `XDG_DATA_HOME`) gets a node of their own there, root included.
    @Test func theDefaultDataDirectoryFollowsHomeAndXDGDataHome() async throws {
        let home = NodeTests.temporaryPath()
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let byHome = try await Self.run(["--help"], environment: ["HOME": home, "PATH": path])
        #expect(byHome.output.contains("(default: \(home)/.local/share/dongne)"), "\(byHome.output.prefix(2_000))")
        let byXDG = try await Self.run(["--help"], environment: ["HOME": home, "XDG_DATA_HOME": home + "/data", "PATH": path])
        #expect(byXDG.output.contains("(default: \(home)/data/dongne)"))
    }

    @Test func anUnreadableDataDirectoryIsReportedNotCrashedOn() async throws {
        let directory = NodeTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory, contents: Data("a file, not a folder".utf8)))
        let result = try await Self.run(["--data", directory, "--port", "off", "--no-dnssd"])
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("dongne: \(directory): cannot create the data directory"))
    }
}
