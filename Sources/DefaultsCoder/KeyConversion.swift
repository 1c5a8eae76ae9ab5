//
//  KeyConversion.swift
//  DefaultsCoder
//
//  The snake-case key strategies.
//

import Foundation

/// `myURLValue` → `my_url_value`, as `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`
/// documents it: words split at each lower-to-upper change and before the last capital
/// of a run of capitals; leading and trailing underscores are kept.
func convertToSnakeCase(_ key: String) -> String {
    guard !key.isEmpty else { return key }
    let characters = Array(key)
    var words: [Range<Int>] = []
    var wordStart = 0
    var index = 1
    while index < characters.count {
        let current = characters[index]
        let previous = characters[index - 1]
        if current.isUppercase {
            if previous.isLowercase || previous.isNumber {
                words.append(wordStart..<index)
                wordStart = index
            } else if previous.isUppercase, index + 1 < characters.count, characters[index + 1].isLowercase {
                words.append(wordStart..<index)
                wordStart = index
            }
        }
        index += 1
    }
    words.append(wordStart..<characters.count)
    return words.map { String(characters[$0]).lowercased() }.joined(separator: "_")
}

/// `one_two_three` → `oneTwoThree`, as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`
/// documents it: leading and trailing underscores are kept, and a key with no
/// underscore inside is left as it is.
func convertFromSnakeCase(_ key: String) -> String {
    guard !key.isEmpty, let first = key.firstIndex(where: { $0 != "_" }) else { return key }
    var last = key.index(before: key.endIndex)
    while last > first, key[last] == "_" { last = key.index(before: last) }
    let core = key[first...last]
    let parts = core.split(separator: "_", omittingEmptySubsequences: true)
    guard parts.count > 1 else { return key }
    var result = String(key[..<first])
    result += parts[0].lowercased()
    for part in parts.dropFirst() {
        result += part.prefix(1).uppercased() + part.dropFirst().lowercased()
    }
    result += key[key.index(after: last)...]
    return result
}

