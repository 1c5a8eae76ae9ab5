// The snake-case key strategies, word for word as Foundation's coders convert keys, so
// that a model written against `JSONEncoder`'s strategies reads the same keys here.

import Foundation

/// `myURLValue` → `my_url_value`, as `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`
/// converts it: words split before each uppercase letter that follows another character,
/// and before the last capital of a run of capitals that a lowercase letter follows;
/// every word lowercased, joined with `_`. Leading and trailing underscores are kept.
func convertToSnakeCase(_ key: String) -> String {
    guard !key.isEmpty else { return key }
    var words: [Range<String.Index>] = []
    var wordStart = key.startIndex
    var searchRange = key.index(after: wordStart)..<key.endIndex
    while let upper = key.rangeOfCharacter(from: .uppercaseLetters, range: searchRange) {
        words.append(wordStart..<upper.lowerBound)
        searchRange = upper.lowerBound..<searchRange.upperBound
        guard let lower = key.rangeOfCharacter(from: .lowercaseLetters, range: searchRange) else {
            // Capitals to the end: they are the last word.
            wordStart = searchRange.lowerBound
            break
        }
        if lower.lowerBound == key.index(after: upper.lowerBound) {
            // One capital, then lowercase: the capital starts the next word.
            wordStart = upper.lowerBound
        } else {
            // A run of capitals is a word of its own, up to the capital before the lowercase.
            let lastCapital = key.index(before: lower.lowerBound)
            words.append(upper.lowerBound..<lastCapital)
            wordStart = lastCapital
        }
        searchRange = lower.upperBound..<searchRange.upperBound
    }
    words.append(wordStart..<searchRange.upperBound)
    return words.map { key[$0].lowercased() }.joined(separator: "_")
}

/// `one_two_three` → `oneTwoThree`, as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`
/// converts it: the first word lowercased, the others capitalized, underscores between
/// them dropped. Leading and trailing underscores are kept, and a key with no underscore
/// inside is left as it is.
func convertFromSnakeCase(_ key: String) -> String {
    guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
    var last = key.index(before: key.endIndex)
    while last > first, key[last] == "_" { key.formIndex(before: &last) }
    let core = key[first...last]
    let words = core.split(separator: "_")
    guard words.count > 1 else { return key }
    let joined = ([words[0].lowercased()] + words.dropFirst().map { $0.capitalized }).joined()
    return String(key[..<first]) + joined + String(key[key.index(after: last)...])
}
