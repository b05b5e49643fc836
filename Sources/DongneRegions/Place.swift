/// An administrative area: a 시·도, a 시·군·구 or a 읍·면·동.
public struct Area: Hashable, Sendable {
    /// KOSTAT's code: 2, 5 or 7 digits, each area's starting with its parent's (but 군위군's, which moved).
    public let code: String
    /// Its Korean name, as people write it today ("강원특별자치도", "종로구", "사직동").
    public let name: String
    /// Its English name.
    public let englishName: String
}

/// Where a point is, at the three levels of South Korea's administrative divisions.
public struct Place: Hashable, Sendable {
    /// The 시·도.
    public let province: Area
    /// The 시·군·구.
    public let municipality: Area
    /// The 읍·면·동, when the point is inside one (a point on the water between islands may be in a 시·군·구's
    /// border and no 읍·면·동's).
    public let submunicipality: Area?
}
