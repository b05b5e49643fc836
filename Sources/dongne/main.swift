import Dongne
import DongneCore
import DongneStore
import Foundation

// Until the REPL lands, `dongne` starts the node, says who it is and where its data lives, and stops.
let options: CommandLineOptions
switch CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error):
    FileHandle.standardError.write(Data("dongne: \(error.message)\n\(CommandLineOptions.usage)\n".utf8))
    exit(2)
}
if options.showHelp {
    print(CommandLineOptions.usage)
    exit(0)
}
do {
    let node = try await Node.start(
        Configuration(dataDirectory: options.dataDirectory, displayName: options.displayName))
    print("dongne node started")
    print("identity     \(node.publicKey.fingerprint.short)  (\(node.configuration.displayName))")
    print("fingerprint  \(node.publicKey.fingerprint.grouped)")
    print("store        \(node.storePath)")
    print("documents    \(try node.store.documentCount())")
    await node.stop()
} catch {
    FileHandle.standardError.write(Data("dongne: \(error)\n".utf8))
    exit(1)
}
