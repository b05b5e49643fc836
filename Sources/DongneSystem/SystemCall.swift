import Glibc

/// A failed system call: which one, and its errno.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed.
    public let function: String
    /// The C library's error number.
    public let code: Int32

    /// A failure of `function` with this error number.
    public init(function: String, code: Int32) {
        self.function = function
        self.code = code
    }

    /// The C library's explanation of the error number alone.
    public var explanation: String { String(cString: strerror(code)) }

    /// The call and the C library's explanation.
    public var description: String { "\(function): \(explanation)" }
}

extension SystemError {
    /// The error of the system call that just failed on this thread (its errno). With
    /// ``systemCall(_:_:)``, the only places the project reads errno.
    public static func last(function: String) -> SystemError {
        SystemError(function: function, code: errno)
    }
}

/// Runs a system call, retrying while it is interrupted by a signal (EINTR), and turns -1 into a
/// ``SystemError``.
@discardableResult
public func systemCall<Result: BinaryInteger>(_ function: String, _ body: () -> Result) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(function: function, code: code)
    }
}
