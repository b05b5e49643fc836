import Dongne
import DongneStore
import Foundation

// dongne: start a node and talk in its REPL. See CommandLineOptions.usage and Command.help.

// Before any other thread exists (it sets an environment variable and a malloc parameter): photos with bounded
// memory.
Vips.prepareProcessForPhotos()

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("dongne: \(message)\n".utf8))
    exit(status)
}

let options: CommandLineOptions
switch CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error): fail("\(error.message)\n\(CommandLineOptions.usage)", status: 2)
}
if options.showHelp {
    print(CommandLineOptions.usage)
    exit(0)
}
/// `dongne` alone chats in the REPL; `dongne node` runs the node as a service; the others ask a running node.
let subcommand = options.arguments.first
var requestOptions = options
requestOptions.arguments = Array(options.arguments.dropFirst())
switch subcommand {
case nil, "node":
    if options.arguments.count > 1 { fail("unexpected \(options.arguments[1])\n\(CommandLineOptions.usage)", status: 2) }
case "status", "send", "history": OneShotCommand.run(subcommand!, options: requestOptions)
case let other?: fail("unknown command \(other)\n\(CommandLineOptions.usage)", status: 2)
}

/// Tests and transcripts set DONGNE_CLOCK_START (milliseconds) for created times that do not depend on when
/// they run; each signed document then takes the next second.
let clock =
    ProcessInfo.processInfo.environment["DONGNE_CLOCK_START"].flatMap(UInt64.init).map {
        NodeClock.stepping(from: $0)
    } ?? .system
let storedName = try? Store.savedDisplayName(inDataDirectory: options.dataDirectory)
var configuration = Configuration(
    dataDirectory: options.dataDirectory, displayName: options.displayName ?? storedName ?? "anonymous",
    location: options.location, clock: clock, listenPort: options.port, peers: options.peers,
    networkPassphrase: options.networkKey, discovery: options.discovery)
configuration.listenAddress = options.listenAddress
configuration.gpsd = options.gpsd
configuration.postingRule = .ownNeighbourhood
configuration.reporterStandingAge = UInt64(options.reporterStandingHours * 3_600_000)
configuration.admission.requiredStampStrength = options.stampStrength
let longestHoldBack = Duration.milliseconds(Int64(options.directHoldBack * 1_000))
configuration.directHoldBack = min(.milliseconds(500), longestHoldBack) ... longestHoldBack

var identityStatus = stat()
if options.stampStrength > 0, stat(options.dataDirectory + "/" + IdentityFile.fileName, &identityStatus) != 0,
    errno == ENOENT
{
    // The first start mines the new identity's stamp: say why it takes a moment (to standard error, so JSON
    // readers of standard output see only events).
    FileHandle.standardError.write(Data("making a new identity and its stamp (a few seconds, once)…\n".utf8))
}
if subcommand == "node" { await HeadlessNode.run(configuration, options: options) }
let node: Node
do { node = try await Node.start(configuration) } catch { fail("\(error)", status: 1) }

/// Today's date for timestamps: the clock's start in transcripts (DONGNE_CLOCK_START), else the system's.
let clockStart = ProcessInfo.processInfo.environment["DONGNE_CLOCK_START"].flatMap(UInt64.init)
let today: @Sendable () -> LocalTime? = {
    LocalTime(milliseconds: clockStart ?? UInt64(max(0, Date().timeIntervalSince1970 * 1_000)))
}
let interactive = isatty(0) == 1 && isatty(1) == 1 && !options.json
let colors = Palette.isWanted(environment: ProcessInfo.processInfo.environment, isTerminal: interactive)
let completer = CompletionSource()
let terminal = interactive ? TerminalConsole(colors: colors, completions: completer.completions) : nil
let console: any Console = terminal ?? StreamConsole(json: options.json)
let session = Session(node: node, console: console, isJSON: options.json, today: today)
completer.use(session)
console.write(
    ConsoleLine(
        text: "* dongne: you are \(node.displayName) (\(node.publicKey.fingerprint.short)); /help lists the commands",
        event: "started",
        fields: [
            "schema": 1, "name": node.displayName, "fingerprint": node.publicKey.fingerprint.full,
            "author": Hex.encode(node.publicKey.bytes), "store": node.storePath,
        ]))
if let address = node.listeningAddress {
    console.write(ConsoleLine(text: "* listening on \(address)", event: "listening", fields: ["address": address]))
}
await session.whereabouts.start()
session.peers.follow()
await session.followJoinedChannels()
session.followDirectMessages()
if let channel = options.channel { _ = await session.handle("/join \(channel)") }
for await line in terminal?.lines() ?? PipedInput.lines() {
    guard await session.handle(line) else { break }
}
session.close()
terminal?.finish()
console.flush()
await node.stop()
exit(0)
