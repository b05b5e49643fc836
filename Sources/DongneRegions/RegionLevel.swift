/// One level of borders (시·군·구 or 읍·면·동): its areas' rings as arcs of quantized points, and a grid that says
/// which areas may hold a point, so that a lookup tests a few polygons, not thousands.
struct RegionLevel: Sendable {
    /// One area and its polygons: each polygon a list of rings, each ring a list of arc indexes.
    struct Feature: Sendable {
        let area: Area
        let province: String
        let polygons: [[[Int32]]]
        let bounds: Bounds
    }

    /// A box in quantized units.
    struct Bounds: Sendable {
        var minX = Int32.max, minY = Int32.max, maxX = Int32.min, maxY = Int32.min

        func contains(_ x: Int32, _ y: Int32) -> Bool { x >= minX && x <= maxX && y >= minY && y <= maxY }
    }

    /// Quantization: longitude = x × scaleX + translateX, latitude = y × scaleY + translateY.
    let scaleX: Double, scaleY: Double, translateX: Double, translateY: Double
    /// Every arc's points, one after another; arc i is `arcStart[i]..<arcStart[i + 1]`.
    let xs: [Int32], ys: [Int32], arcStart: [Int32]
    let features: [Feature]
    let grid: Grid

    /// The area holding the point, if any.
    func feature(latitude: Double, longitude: Double) -> Feature? {
        let (x, y) = quantized(latitude: latitude, longitude: longitude)
        for index in grid.candidates(x, y) {
            let feature = features[Int(index)]
            guard feature.bounds.contains(x, y) else { continue }
            if feature.polygons.contains(where: { contains($0, x, y) }) { return feature }
        }
        return nil
    }

    /// The point in this level's quantized units (clamped: a point far away stays far away, and never traps).
    func quantized(latitude: Double, longitude: Double) -> (Int32, Int32) {
        func clamped(_ value: Double) -> Int32 {
            value.isFinite ? Int32(max(Double(Int32.min), min(Double(Int32.max), value.rounded()))) : Int32.max
        }
        return (clamped((longitude - translateX) / scaleX), clamped((latitude - translateY) / scaleY))
    }

    /// Even-odd over every ring of the polygon (so its holes are outside): a ray to the east crosses its edges an
    /// odd number of times. Arcs are walked as stored; an edge's direction does not change a crossing.
    func contains(_ polygon: [[Int32]], _ x: Int32, _ y: Int32) -> Bool {
        var inside = false
        let px = Double(x) + 0.25, py = Double(y) + 0.25  // off the grid of vertices: no point sits on a vertex
        for ring in polygon {
            for reference in ring {
                let arc = Int(reference < 0 ? ~reference : reference)
                var index = Int(arcStart[arc])
                let end = Int(arcStart[arc + 1])
                while index + 1 < end {
                    let (x1, y1) = (Double(xs[index]), Double(ys[index]))
                    let (x2, y2) = (Double(xs[index + 1]), Double(ys[index + 1]))
                    if (y1 > py) != (y2 > py), px < (x2 - x1) * (py - y1) / (y2 - y1) + x1 { inside.toggle() }
                    index += 1
                }
            }
        }
        return inside
    }
}

/// A uniform grid over a level's extent: each cell lists the areas whose box overlaps it.
struct Grid: Sendable {
    static let side = 256
    let minX: Int32, minY: Int32, cellWidth: Int32, cellHeight: Int32
    let cells: [[Int32]]

    init(_ features: [RegionLevel.Feature]) {
        var all = RegionLevel.Bounds()
        for feature in features where feature.bounds.minX <= feature.bounds.maxX {
            all.minX = min(all.minX, feature.bounds.minX)
            all.minY = min(all.minY, feature.bounds.minY)
            all.maxX = max(all.maxX, feature.bounds.maxX)
            all.maxY = max(all.maxY, feature.bounds.maxY)
        }
        minX = all.minX
        minY = all.minY
        cellWidth = Int32(clamping: max(1, (Int64(all.maxX) - Int64(all.minX)) / Int64(Self.side) + 1))
        cellHeight = Int32(clamping: max(1, (Int64(all.maxY) - Int64(all.minY)) / Int64(Self.side) + 1))
        var cells = [[Int32]](repeating: [], count: Self.side * Self.side)
        for (index, feature) in features.enumerated() where feature.bounds.minX <= feature.bounds.maxX {
            let (x0, y0) = Self.cell(feature.bounds.minX, feature.bounds.minY, minX, minY, cellWidth, cellHeight)
            let (x1, y1) = Self.cell(feature.bounds.maxX, feature.bounds.maxY, minX, minY, cellWidth, cellHeight)
            for cy in y0...y1 { for cx in x0...x1 { cells[cy * Self.side + cx].append(Int32(index)) } }
        }
        self.cells = cells
    }

    /// The areas that may hold the point.
    func candidates(_ x: Int32, _ y: Int32) -> [Int32] {
        guard x >= minX, y >= minY else { return [] }
        let cx = Int((Int64(x) - Int64(minX)) / Int64(cellWidth))
        let cy = Int((Int64(y) - Int64(minY)) / Int64(cellHeight))
        guard cx < Self.side, cy < Self.side else { return [] }
        return cells[cy * Self.side + cx]
    }

    private static func cell(_ x: Int32, _ y: Int32, _ minX: Int32, _ minY: Int32, _ width: Int32, _ height: Int32)
        -> (Int, Int)
    {
        (
            min(side - 1, Int((Int64(x) - Int64(minX)) / Int64(width))),
            min(side - 1, Int((Int64(y) - Int64(minY)) / Int64(height)))
        )
    }
}
