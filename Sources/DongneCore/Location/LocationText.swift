extension Location {
    /// Checks the protocol's rules for a point: finite, latitude in [-90, 90], longitude in [-180, 180].
    public func validate() throws(DocumentError) {
        guard latitude.isFinite else { throw .nonFiniteNumber(field: "latitude") }
        guard longitude.isFinite else { throw .nonFiniteNumber(field: "longitude") }
        guard (-90.0...90.0).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
    }

    /// A point typed by a person: `LAT,LON` or `LAT LON` in decimal degrees ("37.5759,126.9769").
    public init(parsing text: String) throws(LocationInputError) {
        let parts = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        guard parts.count == 2 else { throw .notTwoNumbers(text) }
        guard let latitude = Double(parts[0]), let longitude = Double(parts[1]), latitude.isFinite,
            longitude.isFinite
        else { throw .notTwoNumbers(text) }
        guard (-90.0...90.0).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        self.init(latitude: latitude, longitude: longitude)
    }
}

/// Why typed text is not a point.
public enum LocationInputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not two decimal numbers.
    case notTwoNumbers(String)
    /// A latitude outside [-90, 90].
    case latitudeOutOfRange(Double)
    /// A longitude outside [-180, 180].
    case longitudeOutOfRange(Double)

    /// One line for people.
    public var description: String {
        switch self {
        case .notTwoNumbers(let text):
            "\"\(text)\" is not a position: give LATITUDE,LONGITUDE in decimal degrees, e.g. 37.5759,126.9769"
        case .latitudeOutOfRange(let value): "latitude must be between -90 and 90, not \(value)"
        case .longitudeOutOfRange(let value): "longitude must be between -180 and 180, not \(value)"
        }
    }
}
