import Dongne
import Foundation

/// The command line of `dongne`, parsed by hand: the toolchain ships no argument parser we may depend on.
struct CommandLineOptions: Equatable {
    var dataDirectory = Configuration.defaultDataDirectory
    var displayName: String? = nil
    var channel: String? = nil
    var region: String? = nil
    var json = false
    var showHelp = false

    static let usage = """
        usage: dongne [--data DIR] [--name NAME] [--channel NAME] [--region NAME] [--json] [--help]

          --data DIR        where the identity key and the store live (default: \(Configuration.defaultDataDirectory))
          --name NAME       the name shown beside your messages (a label, not an identity)
          --channel NAME    the channel to join at start
          --region NAME     the channel of your region: you can post only there
          --json            print every event as one JSON object per line
          --help            show this help

        Type /help inside for the commands.
        """

    /// Parses `arguments` (without the program name); a message saying what is wrong when they make no sense.
    static func parse(_ arguments: [String]) -> Result<CommandLineOptions, UsageError> {
        var options = CommandLineOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": options.showHelp = true
            case "--json": options.json = true
            case "--data", "--name", "--channel", "--region":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    return .failure(UsageError(message: "\(argument) needs a value"))
                }
                options.set(argument, value)
            default: return .failure(UsageError(message: "unknown option \(argument)"))
            }
        }
        return .success(options)
    }

    private mutating func set(_ option: String, _ value: String) {
        switch option {
        case "--data": dataDirectory = value
        case "--name": displayName = value
        case "--channel": channel = value
        default: region = value
        }
    }
}

/// A command line that makes no sense, and why.
struct UsageError: Error, Equatable {
    let message: String
}
