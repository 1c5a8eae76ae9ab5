//
//  SuiteTransaction.swift
//  DefaultsCoder
//
//  Reads one or more suites' stored values, lets a body change a copy of them, and writes
//  the result as one change or not at all. Where Foundation keeps the file itself (Linux),
//  that is done on the files: Foundation rewrites a suite's file in place, so a crash
//  during its write can leave half a file; here each file is replaced by an atomic rename,
//  under the package's write lock and an advisory lock that other processes respect too.
//

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum SuiteTransaction {

    /// The values of the suites a transaction works on: `nil` names the suite it runs on,
    /// a string another suite by name. Reads see the changes made so far.
    struct Suites {
        fileprivate var stored: [String?: [String: Any]] = [:]
        /// Reads a value where no file was read (Apple platforms): the suite's `object(forKey:)`.
        fileprivate var read: [String?: (String) -> Any?] = [:]
        /// The changes, in order; `nil` removes.
        fileprivate var changes: [String?: [(key: String, value: Any?)]] = [:]

        func value(forKey key: String, in suite: String?) -> Any? {
            if let change = changes[suite]?.last(where: { $0.key == key }) { return change.value }
            if let dictionary = stored[suite] { return dictionary[key] }
            return read[suite]?(key)
        }

        mutating func set(_ value: Any, forKey key: String, in suite: String?) {
            changes[suite, default: []].append((key, value))
        }

        mutating func remove(_ key: String, in suite: String?) {
            guard value(forKey: key, in: suite) != nil else { return }
            changes[suite, default: []].append((key, nil))
        }

        /// The keys whose value changed in `suite`.
        func changedKeys(in suite: String?) -> [String] {
            var seen = Set<String>()
            return (changes[suite] ?? []).compactMap { seen.insert($0.key).inserted ? $0.key : nil }
        }
    }

    /// Runs `body` on the values of `defaults` and of the suites named `targets`, and
    /// writes what it changed: the target suites first, `defaults` last. When `body`
    /// throws, nothing is written.
    static func run<R>(on defaults: UserDefaults, targets: [String], _ body: (inout Suites) throws -> R) throws -> R {
        var objects: [(name: String?, defaults: UserDefaults)] = [(nil, defaults)]
        for name in targets {
            guard let target = UserDefaults(suiteName: name) else {
                throw DefaultsMigrationError(version: 0, key: name, reason: "UserDefaults(suiteName: \"\(name)\") is not a suite this process can open")
            }
            objects.append((name, target))
        }
        #if canImport(Darwin)
        return try runReadingObjects(objects, body)
        #else
        let files = objects.map { $0.defaults.suiteFile }
        guard files.allSatisfy({ $0 != nil }) else { return try runReadingObjects(objects, body) }
        // A second lock on one file would wait for the first forever (`flock` locks
        // belong to the open file, not the process), and its two copies would overwrite
        // each other.
        for (index, file) in files.enumerated() where files[..<index].contains(where: { $0 === file }) {
            let name = objects[index].name ?? ""
            throw DefaultsMigrationError(version: 0, key: name, reason: "suite \(name) is a suite this migration already writes (\(file!.path))")
        }
        return try runOnFiles(objects, files: files.map { $0! }, body)
        #endif
    }

    /// The transaction on the suites' files: locked, read, changed, replaced atomically.
    private static func runOnFiles<R>(
        _ objects: [(name: String?, defaults: UserDefaults)], files: [SuiteFile], _ body: (inout Suites) throws -> R
    ) throws -> R {
        var suites = Suites()
        let (result, written) = try withLocks(on: files.sorted { $0.path < $1.path }) {
            () throws -> (R, [String?]) in
            for (object, file) in zip(objects, files) {
                // Writes what Foundation holds unwritten, and empties its cache, so that
                // what is read next is the file, as another process may have left it.
                object.defaults.synchronize()
                suites.stored[object.name] = try file.contents()
            }
            let result = try body(&suites)
            var written: [String?] = []
            // Other suites first: their values must be safe before this suite forgets them.
            for (object, file) in zip(objects, files).reversed() where suites.changes[object.name]?.isEmpty == false {
                var domain = suites.stored[object.name] ?? [:]
                for change in suites.changes[object.name] ?? [] { domain[change.key] = change.value }
                try writeDomain(domain, to: file.url)
                file.written()
                // Nothing is unwritten now, so this only empties Foundation's cache: the
                // next read loads the new file.
                object.defaults.synchronize()
                written.append(object.name)
            }
            return (result, written)
        }
        announce(written, of: suites, objects)
        return result
    }

    /// Where there is no file to replace (Apple platforms, where `cfprefsd` owns it):
    /// reads through `object(forKey:)` and writes key by key, the suite the transaction
    /// runs on last, so that a recorded version comes after everything it stands for.
    private static func runReadingObjects<R>(
        _ objects: [(name: String?, defaults: UserDefaults)], _ body: (inout Suites) throws -> R
    ) throws -> R {
        var suites = Suites()
        for object in objects {
            try object.defaults.throwIfFileUnreadable()
            let defaults = object.defaults
            suites.read[object.name] = { defaults.object(forKey: $0) }
        }
        let result = try body(&suites)
        var written: [String?] = []
        for object in objects.reversed() where suites.changes[object.name]?.isEmpty == false {
            try object.defaults.writeGuarded {
                for change in suites.changes[object.name] ?? [] {
                    if let value = change.value {
                        object.defaults.set(value, forKey: change.key)
                    } else {
                        object.defaults.removeObject(forKey: change.key)
                    }
                }
            }
            written.append(object.name)
        }
        announce(written, of: suites, objects)
        return result
    }

    private static func announce(_ written: [String?], of suites: Suites, _ objects: [(name: String?, defaults: UserDefaults)]) {
        for object in objects where written.contains(object.name) {
            for key in suites.changedKeys(in: object.name) { object.defaults.announceChange(of: key) }
        }
    }

    // MARK: Files

    /// Replaces the file in one rename; an empty suite has no file, as Foundation leaves it.
    private static func writeDomain(_ domain: [String: Any], to url: URL) throws {
        if domain.isEmpty {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        let data = try PropertyListSerialization.data(fromPropertyList: domain, format: .xml, options: 0)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }

    /// Runs `body` holding, for each file in turn, the package's write lock and an
    /// exclusive `flock(2)` on `FILE.lock` next to it, which other processes running this
    /// package take as well.
    private static func withLocks<R>(on files: ArraySlice<SuiteFile>, _ body: () throws -> R) throws -> R {
        guard let file = files.first else { return try body() }
        return try file.withWriteLock {
            try FileManager.default.createDirectory(at: file.url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let descriptor = open(file.path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw DefaultsMigrationError(version: 0, key: file.path, reason: "cannot open \(file.path).lock: \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    throw DefaultsMigrationError(version: 0, key: file.path, reason: "cannot lock \(file.path).lock: \(String(cString: strerror(errno)))")
                }
            }
            defer { flock(descriptor, LOCK_UN) }
            return try withLocks(on: files.dropFirst(), body)
        }
    }

    private static func withLocks<R>(on files: [SuiteFile], _ body: () throws -> R) throws -> R {
        try withLocks(on: files[...], body)
    }
}
