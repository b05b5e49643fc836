import Dongne
import DongneSystem
import Foundation

/// `/photo`, `/save`, `/view` and `/open`, and the lines that follow a photo's arrival.
extension Session {
    /// Sends a photo, with a line for each step.
    func sendPhoto(_ path: String) async throws {
        let channel = try currentChannel()
        try await channel.send(photo: path) { [console] step in console.write(.photoSending(step)) }
    }

    /// Writes a photo's original bytes to `path`. A photo not here yet is fetched first, whatever its size, and
    /// saved once it has arrived: in the background, so that the commands typed meanwhile run at once.
    func savePhoto(_ ref: String, to path: String) async throws {
        let hash = try photoHash(ref)
        let shown = ref.hasPrefix("#") ? ref : "#" + ref
        guard node.photoSnapshot(hash).availability != .available else {
            return try writePhoto(hash, shown: shown, to: path)
        }
        console.write(.notice("fetching \(shown) from peers; it is saved once it has arrived"))
        await node.fetchPhoto(hash)
        Task { [self] in
            for await availability in node.photoProgress(hash) where availability == .available { break }
            do { try writePhoto(hash, shown: shown, to: path) } catch { console.write(.error("\(error)")) }
        }
    }

    private func writePhoto(_ hash: BlobHash, shown: String, to path: String) throws {
        try node.savePhoto(hash, to: path)
        let size = node.photoSnapshot(hash).info?.size ?? 0
        console.write(.notice("saved \(shown) to \(path) (\(ConsoleLine.bytes(size)))"))
    }

    /// Draws a photo in the terminal with libchafa; its thumbnail while the photo is not here yet (and then asks
    /// peers for it).
    func viewPhoto(_ ref: String) async throws {
        let (hash, caption) = try photoToShow(ref)
        let photo = node.photoSnapshot(hash)
        let (columns, rows) = Self.pictureSize()
        let mode = TerminalPicture.Mode.best(for: ProcessInfo.processInfo.environment)
        let drawing: (plain: String, colored: String)
        if photo.availability == .available {
            let file = NSTemporaryDirectory() + "dongne-view-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: file) }
            try node.savePhoto(hash, to: file)
            drawing = (
                try TerminalPicture.draw(path: file, columns: columns, rows: rows, colors: false),
                try TerminalPicture.draw(path: file, columns: columns, rows: rows, mode: mode)
            )
        } else if let thumbnail = photo.info?.thumbnail {
            drawing = (
                try TerminalPicture.draw(encoded: thumbnail, columns: columns, rows: rows, colors: false),
                try TerminalPicture.draw(encoded: thumbnail, columns: columns, rows: rows, mode: mode)
            )
            console.write(.notice("the photo is not here yet: its thumbnail, until it arrives"))
            await node.fetchPhoto(hash)
        } else {
            await node.fetchPhoto(hash)
            throw CommandError("the photo is not here yet: asked the peers for it")
        }
        let shown = ref.hasPrefix("#") ? ref : "#" + ref
        console.write(.notice("\(shown): \(caption)" + (photo.info.map { " (\(ConsoleLine.photoFacts($0)))" } ?? "")))
        console.write(.picture(drawing, ref: ref, photo: photo))
    }

    /// `/avatar PATH` makes the photo at PATH the user's avatar; `/avatar USER` draws USER's.
    func avatar(_ argument: String) async throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder), !isFolder.boolValue {
            try await node.setAvatar(photo: argument) { [console] step in console.write(.photoSending(step)) }
            return console.write(.notice("your avatar is set; every peer gets it"))
        }
        let person = try resolve(argument)
        guard let hash = try node.avatars()[person] else {
            throw CommandError("\(argument) has no avatar (or no file is there to make yours)")
        }
        let photo = node.photoSnapshot(hash)
        guard photo.availability == .available || photo.info != nil else {
            await node.fetchPhoto(hash)
            throw CommandError("their avatar is not here yet: asked the peers for it")
        }
        let mode = TerminalPicture.Mode.best(for: ProcessInfo.processInfo.environment)
        let file = NSTemporaryDirectory() + "dongne-avatar-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let drawing: (String, String)
        if photo.availability == .available {
            try node.savePhoto(hash, to: file)
            drawing = (
                try TerminalPicture.draw(path: file, columns: 24, rows: 12, colors: false),
                try TerminalPicture.draw(path: file, columns: 24, rows: 12, mode: mode)
            )
        } else {
            let thumbnail = photo.info?.thumbnail ?? []
            drawing = (
                try TerminalPicture.draw(encoded: thumbnail, columns: 24, rows: 12, colors: false),
                try TerminalPicture.draw(encoded: thumbnail, columns: 24, rows: 12, mode: mode)
            )
        }
        console.write(.picture(drawing, ref: Hex.encode(person.bytes), photo: photo))
    }

    /// Hands a photo to the desktop's viewer (`xdg-open`).
    func openPhoto(_ ref: String) throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil else {
            throw CommandError("no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is set): /view \(ref) draws it here")
        }
        let hash = try photoHash(ref)
        let suffix = ["image/png": "png", "image/webp": "webp"][node.photoSnapshot(hash).info?.mediaType ?? ""] ?? "jpg"
        let file = NSTemporaryDirectory() + "dongne-photo-\(hash).\(suffix)"
        try node.savePhoto(hash, to: file)
        let opener = SpawnedProcess()
        opener.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        opener.arguments = ["xdg-open", file]
        do { try opener.run() } catch { throw CommandError("xdg-open could not start: \(error.localizedDescription)") }
        Thread.detachNewThread { opener.waitUntilExit() }  // reaped, so no zombie stays behind
        console.write(.notice("opened \(file)"))
    }

    /// After a photo message shows, a line when its photo has arrived (and at each quarter on the way), printed
    /// above the line being typed.
    func followPhoto(of message: MessageSnapshot, ref: String) {
        guard case .photo(let hash) = message.content, message.author != node.publicKey,
            node.photoSnapshot(hash).availability != .available
        else { return }
        Task { [node, console] in
            var quarter = 0
            for await availability in node.photoProgress(hash) {
                switch availability {
                case .missing, .preparing:
                    continue
                case .fetching(let share):
                    let reached = Int(share * 4)
                    guard reached > quarter, reached < 4 else { continue }
                    quarter = reached
                    console.write(.photoArriving(ref: ref, share: share))
                case .available:
                    console.write(.photoArrived(ref: ref, photo: node.photoSnapshot(hash)))
                }
            }
        }
    }

    /// The photo `ref` names: a direct message's while the user looks at a conversation (or when no channel
    /// message has that reference), else a channel message's.
    private func photoHash(_ ref: String) throws -> BlobHash { try photoToShow(ref).hash }

    /// The photo `ref` names, with a caption saying whose it is and where it was sent.
    private func photoToShow(_ ref: String) throws -> (hash: BlobHash, caption: String) {
        if direct.viewing != nil, let found = try direct.photo(ref) { return try opened(found, ref) }
        let id: DocumentID
        do { id = try message(ref) } catch {
            if let found = try direct.photo(ref) { return try opened(found, ref) }
            throw error
        }
        let channel = try currentChannel()
        let place = "in \(VisibleText.channel(channel.name.value))"
        // A photo shown in this session may not be stored yet (shown as it arrived): its caption then says less.
        if let shown = shownPhoto(id) {
            let sender = (try? channel.moderation(of: id).message.senderName).map { "from \(VisibleText.name($0)) " }
            return (shown, "a photo \(sender ?? "")\(place)")
        }
        let message = try channel.moderation(of: id).message
        guard case .photo(let named) = message.content else {
            throw CommandError("#\(ref.trimmingCharacters(in: ["#"])) is not a photo")
        }
        return (named, "a photo from \(VisibleText.name(message.senderName)) \(place)")
    }

    /// A direct message's photo, once opened: before, its bytes are ciphertext, of no use to draw or save.
    private func opened(_ found: (photo: PhotoSnapshot, caption: String), _ ref: String) throws
        -> (hash: BlobHash, caption: String)
    {
        guard found.photo.info != nil else {
            throw CommandError("the photo of \(ref.hasPrefix("#") ? ref : "#" + ref) is not here yet: it is on its way")
        }
        return (found.photo.hash, found.caption)
    }

    /// The terminal's size, less a line for the prompt; 80 × 24 when it cannot be told.
    private static func pictureSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 2 else {
            return (80, 22)
        }
        return (Int(size.ws_col), Int(size.ws_row) - 2)
    }
}

extension ConsoleLine {
    /// A step of sending a photo.
    static func photoSending(_ step: PhotoSendingProgress) -> ConsoleLine {
        let text: String
        var fields: [String: any Sendable] = [:]
        switch step {
        case .preparing:
            text = "preparing the photo (turning it upright, removing its metadata)…"
            fields["step"] = "preparing"
        case .storing(let bytes, let total):
            text = "storing the photo: \(ConsoleLine.bytes(bytes)) of \(ConsoleLine.bytes(total))"
            fields = ["step": "storing", "bytes": bytes, "total": total]
        case .sending:
            text = "sending the photo"
            fields["step"] = "sending"
        }
        return ConsoleLine(text: "* " + text, colored: Palette.dim("* " + text), event: "photo-progress", fields: fields)
    }

    /// Part of a photo has arrived.
    static func photoArriving(ref: String, share: Double) -> ConsoleLine {
        let text = "* #\(ref): photo \(Int(share * 100))% here"
        return ConsoleLine(
            text: text, colored: Palette.dim(text), event: "photo-progress", fields: ["ref": ref, "share": share])
    }

    /// A photo has arrived whole.
    static func photoArrived(ref: String, photo: PhotoSnapshot) -> ConsoleLine {
        let facts = photo.info.map { " (\(ConsoleLine.photoFacts($0)))" } ?? ""
        let text = "* #\(ref): photo arrived\(facts): /view #\(ref) draws it, /save #\(ref) PATH writes it"
        var fields: [String: any Sendable] = ["ref": ref, "photo": Hex.encode(photo.hash.bytes)]
        if let info = photo.info { fields["size"] = info.size }
        return ConsoleLine(text: text, colored: Palette.dim(text), event: "photo-arrived", fields: fields)
    }

    /// A drawn photo: shapes alone for a terminal without colours, in colour (or pixels) for one with them.
    static func picture(_ drawing: (plain: String, colored: String), ref: String, photo: PhotoSnapshot) -> ConsoleLine {
        let lines = drawing.plain.split(separator: "\n", omittingEmptySubsequences: false).count
        return ConsoleLine(
            text: drawing.plain, colored: drawing.colored, event: "picture",
            fields: ["ref": ref, "lines": lines, "photo": Hex.encode(photo.hash.bytes)])
    }

    /// `640×480 JPEG, 123 KB`.
    static func photoFacts(_ info: PhotoInfo) -> String {
        let type = info.mediaType.split(separator: "/").last.map { $0.uppercased() } ?? "image"
        return "\(info.width)×\(info.height) \(type), \(bytes(info.size))"
    }

    /// Bytes for people: `812 B`, `123 KB`, `4.2 MB`.
    static func bytes(_ count: Int) -> String {
        if count < 1_000 { return "\(count) B" }
        if count < 1_000_000 { return "\(count / 1_000) KB" }
        return String(format: "%.1f MB", Double(count) / 1_000_000)
    }
}
