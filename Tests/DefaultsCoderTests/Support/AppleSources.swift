// The library's source lines as a build for an Apple platform compiles them: each
// `#if`, `#elseif` and `#else` evaluated for that platform, comments and string literals
// left out. For checks of what the Apple build calls (the privacy manifest's
// required-reason APIs), which no build here can show.

import Foundation

/// The library's code as an Apple platform's build sees it.
enum AppleSources {
    /// A platform the package builds for, with what its SDK can import.
    enum Platform: String, CaseIterable, Sendable {
        case macOS, iOS, tvOS, watchOS, visionOS

        /// Whether `#if canImport(module)` holds in this platform's SDK.
        func canImport(_ module: String) -> Bool {
            switch module {
            case "Darwin", "ObjectiveC", "Foundation", "Dispatch", "notify", "Combine", "Observation", "os": return true
            case "SwiftUI": return true
            case "UIKit": return self != .macOS && self != .watchOS
            case "AppKit": return self == .macOS
            case "WatchKit": return self == .watchOS
            default: return false
            }
        }
    }

    /// The library's modules, from the bottom.
    static let modules = ["KeyValueCoders", "DefaultsCoderStorage", "DefaultsCoder", "DefaultsCoderSync", "DefaultsCoderTesting"]

    /// The library's source files.
    static var files: [URL] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let found = modules.flatMap { module in
            FileManager.default.enumerator(at: sources.appendingPathComponent(module), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL } ?? []
        }
        return found.filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    /// The code of `text` that `platform` compiles, line by line (numbered from 1), less
    /// comments and the contents of string literals.
    static func compiledLines(of text: String, for platform: Platform) -> [(number: Int, code: String)] {
        // Each open `#if`: whether its enclosing code compiles, whether a branch was
        // taken, whether the current branch compiles.
        var stack: [(outer: Bool, taken: Bool, active: Bool)] = []
        var result: [(Int, String)] = []
        var inBlockComment = false
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let code = strip(line, inBlockComment: &inBlockComment)
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            let active = stack.last?.active ?? true
            if trimmed.hasPrefix("#if ") {
                let holds = active && evaluate(String(trimmed.dropFirst(4)), for: platform)
                stack.append((active, holds, holds))
            } else if trimmed.hasPrefix("#elseif "), let frame = stack.popLast() {
                let holds = frame.outer && !frame.taken && evaluate(String(trimmed.dropFirst(8)), for: platform)
                stack.append((frame.outer, frame.taken || holds, holds))
            } else if trimmed.hasPrefix("#else"), let frame = stack.popLast() {
                stack.append((frame.outer, true, frame.outer && !frame.taken))
            } else if trimmed.hasPrefix("#endif") {
                _ = stack.popLast()
            } else if active {
                result.append((index + 1, code))
            }
        }
        return result
    }

    /// `line` less its comments and what its string literals hold.
    private static func strip(_ line: String, inBlockComment: inout Bool) -> String {
        var output = ""
        var characters = Array(line)[...]
        var inString = false
        while let character = characters.first {
            let next = characters.dropFirst().first
            if inBlockComment {
                if character == "*" && next == "/" {
                    inBlockComment = false
                    characters = characters.dropFirst(2)
                } else {
                    characters = characters.dropFirst()
                }
                continue
            }
            if inString {
                if character == "\\" {
                    characters = characters.dropFirst(2)
                    continue
                }
                if character == "\"" {
                    inString = false
                    output.append(character)
                }
                characters = characters.dropFirst()
                continue
            }
            if character == "/" && next == "/" { break }
            if character == "/" && next == "*" {
                inBlockComment = true
                characters = characters.dropFirst(2)
                continue
            }
            if character == "\"" { inString = true }
            output.append(character)
            characters = characters.dropFirst()
        }
        return output
    }

    /// Evaluates a `#if` condition: `os(…)`, `canImport(…)`, `targetEnvironment(…)`,
    /// `compiler(…)`/`swift(…)` (true: the toolchains the package names are new enough),
    /// `true`, `false`, flags (false: no trait is on), `!`, `&&`, `||` and parentheses.
    static func evaluate(_ condition: String, for platform: Platform) -> Bool {
        var parser = ConditionParser(tokens: ConditionParser.tokens(of: condition), platform: platform)
        return parser.disjunction()
    }

    private struct ConditionParser {
        var tokens: [String]
        let platform: Platform

        static func tokens(of text: String) -> [String] {
            var tokens: [String] = []
            var current = ""
            var depth = 0
            for character in text {
                if depth > 0 {
                    current.append(character)
                    if character == "(" { depth += 1 }
                    if character == ")" {
                        depth -= 1
                        if depth == 0 {
                            tokens.append(current)
                            current = ""
                        }
                    }
                } else if character == "(" && !current.isEmpty {
                    current.append(character)
                    depth = 1
                } else if "()!".contains(character) {
                    if !current.isEmpty {
                        tokens.append(current)
                        current = ""
                    }
                    tokens.append(String(character))
                } else if character == "&" || character == "|" {
                    if !current.isEmpty && !current.hasPrefix(String(character)) {
                        tokens.append(current)
                        current = ""
                    }
                    current.append(character)
                    if current.count == 2 {
                        tokens.append(current)
                        current = ""
                    }
                } else if character.isWhitespace {
                    if !current.isEmpty {
                        tokens.append(current)
                        current = ""
                    }
                } else {
                    current.append(character)
                }
            }
            if !current.isEmpty { tokens.append(current) }
            return tokens
        }

        mutating func disjunction() -> Bool {
            var value = conjunction()
            while tokens.first == "||" {
                tokens.removeFirst()
                let right = conjunction()
                value = value || right
            }
            return value
        }

        mutating func conjunction() -> Bool {
            var value = unary()
            while tokens.first == "&&" {
                tokens.removeFirst()
                let right = unary()
                value = value && right
            }
            return value
        }

        mutating func unary() -> Bool {
            guard let token = tokens.first else { return false }
            tokens.removeFirst()
            switch token {
            case "!": return !unary()
            case "(":
                let value = disjunction()
                if tokens.first == ")" { tokens.removeFirst() }
                return value
            case "true": return true
            case "false": return false
            default: return atom(token)
            }
        }

        func atom(_ token: String) -> Bool {
            guard let open = token.firstIndex(of: "("), token.hasSuffix(")") else { return false }
            let name = String(token[..<open])
            let argument = token[token.index(after: open)..<token.index(before: token.endIndex)].trimmingCharacters(in: .whitespaces)
            switch name {
            case "os": return argument == platform.rawValue
            case "canImport": return platform.canImport(argument)
            case "targetEnvironment": return false
            case "compiler", "swift": return true
            default: return false
            }
        }
    }
}
