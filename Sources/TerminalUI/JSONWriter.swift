// The one JSON writer: every JSON object micmon prints is built with `JSONObject`, so string
// escaping and number formatting happen in one place. Pure; any thread.

import JSONText

/// JSON's string literals, numbers and the schema version.
public enum JSON {
    /// The `"schema"` every top-level object carries; raised when a key changes meaning or goes.
    public static let schemaVersion = 1

    /// A JSON string literal, quotes included: `"` and `\` escaped, control characters
    /// (U+0000…U+001F) as `\u00XX`, everything else (non-ASCII too) passed through as UTF-8
    /// (`JSONText.quoted`, which the Engine's sidecar writes with too).
    public static func quoted(_ text: String) -> String { JSONText.quoted(text) }

    /// `value` with `decimals` digits, or `null` when it is nil or not finite.
    public static func number(_ value: Double?, decimals: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        return TextFormat.fixed(value, decimals: decimals)
    }
}

/// One JSON object, its keys in the order they are added, written on one line.
public struct JSONObject: Sendable, Equatable {
    private var body = ""

    public init() {}

    /// A top-level object: `"type"` first, then `"schema"`.
    public init(type: String) {
        string("type", type)
        integer("schema", JSON.schemaVersion)
    }

    /// The object as one line of JSON.
    public var text: String { "{" + body + "}" }

    /// Adds `key` with an already written JSON value.
    mutating func literal(_ key: String, _ json: String) {
        if !body.isEmpty { body += "," }
        body += JSON.quoted(key) + ":" + json
    }

    /// A string, or null.
    public mutating func string(_ key: String, _ value: String?) {
        literal(key, value.map(JSON.quoted) ?? "null")
    }

    /// A number with `decimals` digits after the point; nil and non-finite values are null.
    public mutating func number(_ key: String, _ value: Double?, decimals: Int) {
        literal(key, JSON.number(value, decimals: decimals))
    }

    /// A level in dB, made finite (below the floor reads the floor).
    mutating func decibels(_ key: String, _ value: Double, decimals: Int) {
        literal(key, TextFormat.decibels(value, decimals: decimals))
    }

    public mutating func integer<Integer: BinaryInteger>(_ key: String, _ value: Integer?) {
        literal(key, value.map { String($0) } ?? "null")
    }

    public mutating func bool(_ key: String, _ value: Bool) {
        literal(key, value ? "true" : "false")
    }

    public mutating func object(_ key: String, _ value: JSONObject?) {
        literal(key, value?.text ?? "null")
    }

    public mutating func objects(_ key: String, _ values: [JSONObject]) {
        literal(key, "[" + values.map(\.text).joined(separator: ",") + "]")
    }

    public mutating func strings(_ key: String, _ values: [String]) {
        literal(key, "[" + values.map(JSON.quoted).joined(separator: ",") + "]")
    }

    public mutating func numbers(_ key: String, _ values: [Double], decimals: Int) {
        literal(key, "[" + values.map { JSON.number($0, decimals: decimals) }.joined(separator: ",") + "]")
    }
}
