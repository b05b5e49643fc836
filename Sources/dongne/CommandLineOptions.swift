import Dongne

/// The command line of `dongne`, parsed by hand: the toolchain ships no argument parser we may depend on.
struct CommandLineOptions: Equatable {
    var dataDirectory = Configuration.defaultDataDirectory
    var displayName = "anonymous"
    var showHelp = false

    static let usage = """
        usage: dongne [--data DIR] [--name NAME] [--help]

          --data DIR    where the identity key and the store live (default: \(Configuration.defaultDataDirectory))
          --name NAME   the name shown beside your messages (a label, not an identity)
          --help        show this help
        """

    /// Parses `arguments` (without the program name); a message saying what is wrong when they make no sense.
    static func parse(_ arguments: [String]) -> Result<CommandLineOptions, UsageError> {
        var options = CommandLineOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": options.showHelp = true
            case "--data", "--name":
                guard let value = rest.popFirst(), !value.isEmpty else {
                    return .failure(UsageError(message: "\(argument) needs a value"))
                }
                if argument == "--data" { options.dataDirectory = value } else { options.displayName = value }
            default: return .failure(UsageError(message: "unknown option \(argument)"))
            }
        }
        return .success(options)
    }
}

/// A command line that makes no sense, and why.
struct UsageError: Error, Equatable {
    let message: String
}
