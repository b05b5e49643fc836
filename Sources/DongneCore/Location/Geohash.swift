/// Geohash (Gustavo Niemeyer's public-domain scheme, as geohash.org and BitChat use it): a point's cell on the map
/// as base-32 text, each character halving the cell five times, longitude first. Five characters name a cell about
/// 4.9 km × 4.9 km, six about 1.2 km × 0.6 km, seven about 150 m × 150 m: places without a name.
public enum Geohash {
    /// The alphabet: digits and lower-case letters without a, i, l and o.
    public static let alphabet = Array("0123456789bcdefghjkmnpqrstuvwxyz")

    /// The precisions dongne offers channels for.
    public static let channelPrecisions: ClosedRange<Int> = 5...7

    /// The cell of `precision` characters (1 to 12) holding the point; nil for a point off the map or NaN.
    public static func encode(latitude: Double, longitude: Double, precision: Int) -> String? {
        guard (1...12).contains(precision), (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude)
        else { return nil }
        var latitudeRange = (-90.0, 90.0), longitudeRange = (-180.0, 180.0)
        var text = "", bits = 0, character = 0, evenBit = true
        while text.count < precision {
            let value = evenBit ? longitude : latitude
            var range = evenBit ? longitudeRange : latitudeRange
            let middle = (range.0 + range.1) / 2
            character <<= 1
            if value >= middle {
                character |= 1
                range.0 = middle
            } else {
                range.1 = middle
            }
            if evenBit { longitudeRange = range } else { latitudeRange = range }
            evenBit.toggle()
            bits += 1
            if bits == 5 {
                text.append(alphabet[character])
                (bits, character) = (0, 0)
            }
        }
        return text
    }

    /// Whether `text` is a geohash of 1 to 12 characters of the alphabet.
    public static func isValid(_ text: String) -> Bool {
        (1...12).contains(text.count) && text.allSatisfy { alphabet.contains($0) }
    }
}
