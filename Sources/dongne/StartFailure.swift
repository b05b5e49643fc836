import Dongne
import DongneStore

/// Why a node could not start, as one log line that says what to do about it.
enum StartFailure {
    static func line(for error: any Error) -> String {
        "cannot start: \(error)" + (advice(for: error).map { " — \($0)" } ?? "")
    }

    /// What the operator can do, for the failures an operator can fix; nil when the error says it already.
    static func advice(for error: any Error) -> String? {
        switch error {
        case DongneError.networkUnavailable(let reason) where reason.hasPrefix("cannot listen"):
            "another program (or another dongne node) holds that port: stop it, or give another with --port (0 takes a free one)"
        case StoreError.file:
            "give a folder this user may write with --data DIR (it is made with mode 0700)"
        case StoreError.newerSchema:
            "a newer dongne wrote this store: run that version, or give another folder with --data DIR"
        case StoreError.sqlite:
            "the store could not be opened: check the disk has room and the folder is this user's, or give another with --data DIR"
        default: nil
        }
    }
}
