import DongneCore
import DongneStore
import Foundation
import Testing

@Suite struct IdentityFileTests {
    @Test func anIdentityIsMadeOnceWithMode0600AndLoadedAfterwards() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(IdentityFile.fileName)
        let made = try IdentityFile.loadOrCreate(at: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as! NSNumber).intValue == 0o600)
        #expect(try IdentityFile.loadOrCreate(at: path).publicKey == made.publicKey)
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
    }

    @Test func aKeyFileOthersCanReadIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(IdentityFile.fileName)
        _ = try IdentityFile.loadOrCreate(at: path)
        chmod(path, 0o644)
        #expect(throws: StoreError.self) { try IdentityFile.load(from: path) }
        do { _ = try IdentityFile.load(from: path) } catch { #expect("\(error)".contains("chmod 600")) }
    }

    @Test func aDamagedKeyFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(IdentityFile.fileName)
        _ = FileManager.default.createFile(
            atPath: path, contents: Data("not a key\n".utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: StoreError.self) { try IdentityFile.load(from: path) }
    }
}

@Suite struct IdentityRaceTests {
    @Test func nodesStartingTogetherAgreeOnOneIdentity() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(IdentityFile.fileName)
        let keys = try await withThrowingTaskGroup(of: PublicKey.self) { group in
            for _ in 0..<16 { group.addTask { try IdentityFile.loadOrCreate(at: path).publicKey } }
            return try await group.reduce(into: Set<PublicKey>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == [IdentityFile.fileName])
    }
}
