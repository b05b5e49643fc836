import Dongne
import DongneNet
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
let socketPath = options.socket
    ?? LocalAPIServer.socketPath(dataDirectory: options.dataDirectory, environment: ProcessInfo.processInfo.environment)
let interactive = isatty(0) == 1 && isatty(1) == 1 && !options.json
let colors = Palette.isWanted(environment: ProcessInfo.processInfo.environment, isTerminal: interactive)
// A node already runs on this data directory (a service, or another REPL): this REPL attaches to it.
if subcommand == nil, LocalListener.answers(socketPath) {
    await AttachedREPL.run(path: socketPath, options: options, interactive: interactive, colors: colors)
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

// Other programs and REPLs of this user attach to this node while it runs (a REPL that finds it is already
// served attached above instead).
let server: LocalAPIServer?
do { server = try LocalAPIServer(node: node, path: socketPath) { _ in } } catch {
    server = nil
    FileHandle.standardError.write(Data("dongne: other programs cannot attach to this node: \(error)\n".utf8))
}
let completer = CompletionSource()
let terminal = interactive ? TerminalConsole(colors: colors, completions: completer.completions) : nil
let console: any Console = terminal ?? StreamConsole(json: options.json)
let session = Session(node: node, console: console, isJSON: options.json, today: REPLClock.today)
completer.use(session)
await session.begin(joining: options.channel)
for await line in terminal?.lines() ?? PipedInput.lines() {
    guard await session.handle(line) else { break }
}
session.close()
terminal?.finish()
console.flush()
server?.close()
await node.stop()
exit(0)
