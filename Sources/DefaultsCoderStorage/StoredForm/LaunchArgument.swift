// Launch arguments and `defaults write` values: strings read as the numbers and booleans
// they stand for, at the top of a stored value.

import Foundation
import KeyValueCoders

/// Launch arguments (`./app -flag YES -count 2`, an Xcode scheme's arguments) and
/// `defaults write` reach an app as strings, and `bool(forKey:)`, `integer(forKey:)` and
/// `double(forKey:)` read them. At the top of a stored value, a string that does not
/// decode as it is is read the same way, but strictly: `"YES"`, `"no"`, `"true"`, `"1"`
/// are booleans; a whole number in the grammar of `Decimal(strictString:)` (`"42"`,
/// `"-2.5"`, `"1e3"`) is a number, read from its digits exactly as each type asks
/// (`NumberText`: `"1e200"` a `Double`, 39 digits a `UInt128`), under the decoder's
/// exactness rules; `"other"`, `"1e"` and `" 2"` are neither and still throw.
enum LaunchArgument {
    /// The values `string` may stand for, the number first.
    static func readings(of string: String) -> [Any] {
        var readings: [Any] = []
        if DecimalDigits(string) != nil { readings.append(NumberText(text: string)) }
        switch string.lowercased() {
        case "yes", "true", "1": readings.append(true)
        case "no", "false", "0": readings.append(false)
        default: break
        }
        return readings
    }
}
