import Dongne
import Foundation

/// The local API's photos: what the node holds of one (with its thumbnail), a fetch from peers, and its bytes a
/// chunk at a time (base64), so that a program reads a photo through the socket whatever the node's sandbox lets
/// it write. Sending one names a file the node reads (`send` and `dm.send` with `photo`).
enum LocalAPIPhotos {
    /// A photo to send: an absolute path, which the node opens itself (it runs elsewhere than the program, and
    /// as a service may see a private /tmp).
    static func readablePath(_ path: String) throws -> String {
        guard path.hasPrefix("/") else {
            throw LocalAPIError.badRequest("photo is a file's absolute path: the node does not share your working directory")
        }
        return path
    }
}

extension LocalAPIRequests {
    /// `photo`, `photo.fetch` and `photo.read`.
    static func photos(_ op: String, _ request: LocalAPIRequest, node: Node) async throws -> [String: Any] {
        let hash = try photoHash(in: request)
        switch op {
        case "photo":
            let photo = node.photoSnapshot(hash)
            var answer: [String: Any] = ["photo": JSONText.Fragment { LocalAPIContent.write(photo, into: &$0) }]
            answer["thumbnail"] = photo.info.map { Data($0.thumbnail).base64EncodedString() }
            return answer
        case "photo.fetch":
            await node.fetchPhoto(hash)
            return ["photo": JSONText.Fragment { LocalAPIContent.write(node.photoSnapshot(hash), into: &$0) }]
        default:
            let index = try request.integer("chunk", default: 0) ?? 0
            let (bytes, count) = try node.photoChunk(hash, index: index)
            return ["chunk": index, "chunks": count, "data": Data(bytes).base64EncodedString()]
        }
    }

    static func photoHash(in request: LocalAPIRequest) throws -> BlobHash {
        guard let bytes = Hex.decode(try request.string("photo")), let hash = BlobHash(bytes) else {
            throw LocalAPIError.badRequest("photo is a photo's hash: 64 hex digits, as a photo message's photo.hash")
        }
        return hash
    }
}
