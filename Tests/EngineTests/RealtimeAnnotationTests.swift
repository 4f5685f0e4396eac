import Foundation
import Testing

// Keeps the realtime path compiler-checked, by reading the sources: every function in a kernel
// file carries `@_noLocks` and `@_noAllocation` (the compiler then proves it takes no lock and
// allocates nothing), and every session's process callback is a thin glue function that calls
// only C port buffers, the clock, the sanitizer hooks and its checked kernel. Files are found by
// pattern (`*Kernel.swift`, `*Callbacks.swift`), so a new kernel or glue file is covered the day it
// appears. Test threads only.

/// One token of Swift source, as far as finding declarations needs: comments, string literals
/// (with interpolations, multi-line and raw) and whitespace are skipped.
struct SwiftToken: Equatable {
    enum Kind: Equatable {
        /// An identifier, keyword, number or `#directive`.
        case word
        /// `@name`; its parenthesized arguments are separate tokens.
        case attribute
        /// Any other single character.
        case punctuation
    }

    let kind: Kind
    let text: String
    /// The 1-based line it starts on.
    let line: Int
}

/// A `func` declaration: its name, attributes (`@_noLocks`, …), modifiers (`nonisolated`, …) and
/// its body's tokens (`hasBody` false for a protocol requirement).
struct FunctionDeclaration {
    let name: String
    let attributes: [String]
    let modifiers: [String]
    let line: Int
    let hasBody: Bool
    let body: ArraySlice<SwiftToken>
}

/// A small Swift scanner (SwiftSyntax is not a dependency of this package): tokens, then the
/// `func` declarations with the attributes and modifiers in front of them. Regex literals are not
/// understood (kernel and glue files have none); an unterminated comment or string is an error.
enum SwiftScanner {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    static let modifiers: Set<String> = [
        "public", "private", "fileprivate", "internal", "package", "open", "static", "class", "final",
        "mutating", "nonmutating", "nonisolated", "override", "convenience", "required", "dynamic",
        "consuming", "borrowing", "isolated", "indirect", "lazy", "weak", "unowned",
    ]

    static func tokens(_ source: String) throws -> [SwiftToken] {
        var scanner = ByteScanner(bytes: Array(source.utf8))
        return try scanner.scanTokens(untilCloseParen: false)
    }

    static func functions(in source: String) throws -> [FunctionDeclaration] {
        let tokens = try tokens(source)
        var found: [FunctionDeclaration] = []
        var attributes: [String] = []
        var modifiers: [String] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if token.kind == .attribute {
                attributes.append(token.text)
                index = skipArguments(tokens, after: index)
                continue
            }
            if token.kind == .word && Self.modifiers.contains(token.text) {
                modifiers.append(token.text)
                index = skipArguments(tokens, after: index)
                continue
            }
            if token.kind == .word && token.text == "func" && index + 1 < tokens.count {
                let name = operatorOrName(tokens, at: index + 1)
                let body = bodyRange(tokens, after: index + 1)
                found.append(
                    FunctionDeclaration(
                        name: name, attributes: attributes, modifiers: modifiers, line: token.line,
                        hasBody: body != nil, body: body.map { tokens[$0] } ?? []))
            }
            attributes = []
            modifiers = []
            index += 1
        }
        return found
    }

    /// The index after `tokens[index]` and, if `(` follows it, the balanced arguments.
    static func skipArguments(_ tokens: [SwiftToken], after index: Int) -> Int {
        var next = index + 1
        guard next < tokens.count, tokens[next].text == "(" else { return next }
        var depth = 0
        while next < tokens.count {
            if tokens[next].text == "(" { depth += 1 }
            if tokens[next].text == ")" {
                depth -= 1
                if depth == 0 { return next + 1 }
            }
            next += 1
        }
        return next
    }

    /// A function's name: an identifier, or the characters of an operator (`==`, `+`).
    static func operatorOrName(_ tokens: [SwiftToken], at index: Int) -> String {
        if tokens[index].kind == .word { return tokens[index].text }
        var name = ""
        var next = index
        while next < tokens.count, tokens[next].kind == .punctuation, !"(<".contains(tokens[next].text) {
            name += tokens[next].text
            next += 1
        }
        return name
    }

    /// The tokens inside the body braces of the function whose name is at `index`: the first `{`
    /// outside parentheses (default arguments may hold closures), to its matching `}`; nil when
    /// it has no body (a protocol requirement).
    static func bodyRange(_ tokens: [SwiftToken], after index: Int) -> Range<Int>? {
        var parentheses = 0
        var next = index + 1
        while next < tokens.count {
            let text = tokens[next].text
            if text == "(" || text == "[" { parentheses += 1 }
            if text == ")" || text == "]" { parentheses -= 1 }
            if parentheses == 0 && text == "}" { return nil }
            if parentheses == 0 && tokens[next].kind == .word
                && ["func", "var", "let", "init", "subscript"].contains(text)
            {
                return nil
            }
            if parentheses == 0 && text == "{" { break }
            next += 1
        }
        guard next < tokens.count else { return nil }
        let open = next
        var depth = 0
        while next < tokens.count {
            if tokens[next].text == "{" { depth += 1 }
            if tokens[next].text == "}" {
                depth -= 1
                if depth == 0 { return open + 1 ..< next }
            }
            next += 1
        }
        return open + 1 ..< next
    }

    static let keywords: Set<String> = [
        "if", "guard", "else", "for", "in", "while", "repeat", "switch", "case", "default", "return", "let",
        "var", "where", "do", "catch", "defer", "try", "throw", "await", "is", "as",
    ]

    /// The calls in a body, as written: `a.b.c(` gives "a.b.c". A trailing-closure call counts
    /// only for the escape hatches (`_unsafePerformance { }`, `withUnsafe… { }`): a word before
    /// `{` is otherwise a condition or a loop's range.
    static func calls(in body: ArraySlice<SwiftToken>) -> Set<String> {
        var found: Set<String> = []
        let tokens = Array(body)
        for index in tokens.indices where index > 0 {
            let opener = tokens[index].text
            guard opener == "(" || opener == "{" else { continue }
            var start = index - 1
            guard tokens[start].kind == .word, !keywords.contains(tokens[start].text) else { continue }
            while start >= 2, tokens[start - 1].text == ".", tokens[start - 2].kind == .word { start -= 2 }
            let chain = tokens[start ..< index].map(\.text).joined()
            let last = tokens[index - 1].text
            if opener == "{" && !(last.hasPrefix("_") || last.hasPrefix("with")) { continue }
            found.insert(chain)
        }
        return found
    }
}

/// The byte-level half of `SwiftScanner`.
struct ByteScanner {
    let bytes: [UInt8]
    var position = 0
    var line = 1

    init(bytes: [UInt8]) { self.bytes = bytes }

    func byte(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    mutating func advance(_ count: Int = 1) {
        for _ in 0 ..< count where position < bytes.count {
            if bytes[position] == UInt8(ascii: "\n") { line += 1 }
            position += 1
        }
    }

    static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
            || b >= 0x80
    }

    /// Tokens up to the end, or (inside a string interpolation) up to the `)` closing it.
    mutating func scanTokens(untilCloseParen: Bool) throws -> [SwiftToken] {
        var tokens: [SwiftToken] = []
        var depth = 0
        while let b = byte() {
            if b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
                advance()
            } else if b == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "/") {
                while let c = byte(), c != UInt8(ascii: "\n") { advance() }
            } else if b == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                try skipBlockComment()
            } else if b == UInt8(ascii: "\"") || (b == UInt8(ascii: "#") && startsRawString()) {
                try skipString()
            } else if b == UInt8(ascii: "@"), let next = byte(1), Self.isWordByte(next) {
                let start = position
                let startLine = line
                advance()
                while let c = byte(), Self.isWordByte(c) { advance() }
                tokens.append(SwiftToken(kind: .attribute, text: text(start), line: startLine))
            } else if b == UInt8(ascii: "`") {
                let startLine = line
                advance()
                let start = position
                while let c = byte(), c != UInt8(ascii: "`") { advance() }
                tokens.append(SwiftToken(kind: .word, text: text(start), line: startLine))
                advance()
            } else if Self.isWordByte(b) || (b == UInt8(ascii: "#") && byte(1).map(Self.isWordByte) == true) {
                let start = position
                let startLine = line
                advance()
                while let c = byte(), Self.isWordByte(c) { advance() }
                tokens.append(SwiftToken(kind: .word, text: text(start), line: startLine))
            } else {
                if untilCloseParen {
                    if b == UInt8(ascii: "(") { depth += 1 }
                    if b == UInt8(ascii: ")") {
                        if depth == 0 {
                            advance()
                            return tokens
                        }
                        depth -= 1
                    }
                }
                tokens.append(SwiftToken(kind: .punctuation, text: String(UnicodeScalar(b)), line: line))
                advance()
            }
        }
        if untilCloseParen {
            throw SwiftScanner.Malformed(description: "unterminated string interpolation at line \(line)")
        }
        return tokens
    }

    func text(_ start: Int) -> String { String(decoding: bytes[start ..< position], as: UTF8.self) }

    /// `#…#"`: a raw string starts here (not `#if`, `#filePath`).
    func startsRawString() -> Bool {
        var offset = 0
        while byte(offset) == UInt8(ascii: "#") { offset += 1 }
        return byte(offset) == UInt8(ascii: "\"")
    }

    mutating func skipBlockComment() throws {
        let startLine = line
        var depth = 0
        while let b = byte() {
            if b == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                depth += 1
                advance(2)
                continue
            }
            if b == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/") {
                depth -= 1
                advance(2)
                if depth == 0 { return }
                continue
            }
            advance()
        }
        throw SwiftScanner.Malformed(description: "unterminated comment from line \(startLine)")
    }

    /// A string literal: `"…"`, `"""…"""`, raw `#"…"#`, with `\(…)` interpolations (which may
    /// hold strings of their own) skipped whole.
    mutating func skipString() throws {
        let startLine = line
        var hashes = 0
        while byte() == UInt8(ascii: "#") {
            hashes += 1
            advance()
        }
        let multiline = byte(1) == UInt8(ascii: "\"") && byte(2) == UInt8(ascii: "\"")
        advance(multiline ? 3 : 1)
        let quote = UInt8(ascii: "\"")
        while let b = byte() {
            if b == UInt8(ascii: "\\") && (0 ..< hashes).allSatisfy({ byte(1 + $0) == UInt8(ascii: "#") }) {
                advance(1 + hashes)
                if byte() == UInt8(ascii: "(") {
                    advance()
                    _ = try scanTokens(untilCloseParen: true)
                } else {
                    advance()
                }
                continue
            }
            if b == UInt8(ascii: "\n") && !multiline {
                throw SwiftScanner.Malformed(description: "unterminated string at line \(startLine)")
            }
            let closing = multiline ? (b == quote && byte(1) == quote && byte(2) == quote) : b == quote
            let width = multiline ? 3 : 1
            if closing && (0 ..< hashes).allSatisfy({ byte(width + $0) == UInt8(ascii: "#") }) {
                advance(width + hashes)
                return
            }
            advance()
        }
        throw SwiftScanner.Malformed(description: "unterminated string from line \(startLine)")
    }
}

@Suite("Realtime annotations")
struct RealtimeAnnotationTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")

    /// Every Swift file under Sources, as a path relative to it ("Engine/CaptureKernel.swift").
    static func sourceFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".swift") { files.append(path) }
        }
        return files.sorted()
    }

    static func read(_ file: String) throws -> String {
        try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
    }

    static func fileName(_ path: String) -> String { (path as NSString).lastPathComponent }

    /// Kernel files: `*Kernel.swift` in any module (the sessions' kernels in Engine, DSP's noise
    /// suppressor kernel, and whatever kernel comes next).
    static let kernelFiles: [String] = sourceFiles().filter { fileName($0).hasSuffix("Kernel.swift") }

    /// Process glue files: `*Callbacks.swift`, where the C callbacks of each session live.
    static let callbackFiles: [String] = sourceFiles().filter { fileName($0).hasSuffix("Callbacks.swift") }

    /// Functions in kernel files that need not be annotated, each with its reason. Empty today: add
    /// one only with a reason a reviewer can check (e.g. a set-up helper called before activation).
    static let exemptions: [String: String] = [:]

    /// Realtime entry points outside kernel files (files that are partly realtime): each must be
    /// annotated. Any file whose declarations use `@_noLocks` is also checked for its partner.
    static let namedEntryPoints: [(file: String, functions: [String])] = [
        ("DSP/Meter.swift", ["process", "processStereo", "processChannels", "processQuad", "scan", "store"]),
        ("DSP/DemoVoiceSource.swift", ["render"]),
    ]

    static func isAnnotated(_ function: FunctionDeclaration) -> Bool {
        function.attributes.contains("@_noLocks") && function.attributes.contains("@_noAllocation")
    }

    // MARK: the scanner itself (a scanner that finds nothing would pass every check below)

    @Test("the scanner skips comments and strings, and reads attributes and modifiers over lines")
    func scannerReadsDeclarations() throws {
        let source = #"""
            // func commentedOut() {}
            /* a block /* nested */ func inBlock() {} */
            let text = "func inString() { \(value("func inInterpolation()")) }"
            let raw = #"func inRaw() "# + """
                func inMultiline() \(x)
                """
            @inline(__always)
            @_noLocks
            @_noAllocation
            private static func annotated(_ a: Int = { 3 }()) -> Int { helper(a) + Int(2) }
            nonisolated(unsafe) public func plain<T>(_ t: T) where T: Equatable {
                _unsafePerformance { cCall() }
                for i in 0 ..< count { use(i) }
            }
            protocol P { func requirement() }
            static func == (a: S, b: S) -> Bool { true }
            """#
        let functions = try SwiftScanner.functions(in: source)
        #expect(functions.map(\.name) == ["annotated", "plain", "requirement", "=="])
        let annotated = try #require(functions.first)
        #expect(annotated.attributes == ["@inline", "@_noLocks", "@_noAllocation"])
        #expect(annotated.modifiers == ["private", "static"])
        #expect(SwiftScanner.calls(in: annotated.body) == ["helper", "Int"])
        let plain = functions[1]
        #expect(plain.attributes.isEmpty)
        #expect(plain.modifiers == ["nonisolated", "public"])
        #expect(SwiftScanner.calls(in: plain.body) == ["_unsafePerformance", "cCall", "use"])
        #expect(!functions[2].hasBody && functions[0].hasBody && functions[3].hasBody)
        #expect(throws: SwiftScanner.Malformed.self) { try SwiftScanner.tokens("let s = \"open") }
        #expect(throws: SwiftScanner.Malformed.self) { try SwiftScanner.tokens("/* open") }
    }

    // MARK: kernels

    @Test("kernel files are found by pattern: the Engine's sessions and DSP's noise suppressor")
    func kernelFilesAreFound() {
        #expect(
            Self.kernelFiles.contains { $0.hasPrefix("Engine/") }, "no Engine/*Kernel.swift under \(Self.sources.path)")
        #expect(Self.kernelFiles.contains("DSP/NoiseSuppressorKernel.swift"), "found: \(Self.kernelFiles)")
    }

    @Test("every function in a kernel file is @_noLocks @_noAllocation")
    func kernelsAreAnnotated() throws {
        try #require(!Self.kernelFiles.isEmpty, "no *Kernel.swift file under \(Self.sources.path)")
        for file in Self.kernelFiles {
            let functions = try SwiftScanner.functions(in: Self.read(file))
            #expect(!functions.isEmpty, "\(file): no function found")
            // A protocol requirement has no code to check; its implementations are checked.
            for function in functions where function.hasBody && Self.exemptions["\(file):\(function.name)"] == nil {
                #expect(
                    Self.isAnnotated(function),
                    "\(file):\(function.line): \(function.name) is not @_noLocks @_noAllocation: \(function.attributes)"
                )
            }
        }
        for key in Self.exemptions.keys {
            let (file, name) = (String(key.split(separator: ":")[0]), String(key.split(separator: ":")[1]))
            #expect(
                try SwiftScanner.functions(in: Self.read(file)).contains { $0.name == name }, "stale exemption \(key)")
        }
    }

    @Test("named realtime entry points outside kernel files are annotated, and @_noLocks never comes alone")
    func partlyRealtimeFilesAreAnnotated() throws {
        for (file, names) in Self.namedEntryPoints {
            let functions = try SwiftScanner.functions(in: Self.read(file))
            for name in names {
                let matching = functions.filter { $0.name == name }
                #expect(!matching.isEmpty, "\(file): \(name) not found")
                for function in matching {
                    #expect(
                        Self.isAnnotated(function), "\(file):\(function.line): \(name) is not @_noLocks @_noAllocation")
                }
            }
        }
        var annotatedSomewhere = 0
        for file in Self.sourceFiles() {
            for function in try SwiftScanner.functions(in: Self.read(file))
            where function.attributes.contains("@_noLocks") {
                annotatedSomewhere += 1
                #expect(
                    function.attributes.contains("@_noAllocation"),
                    "\(file):\(function.line): \(function.name) is @_noLocks only")
            }
        }
        #expect(annotatedSomewhere > 0)
    }

    // MARK: process glue

    /// What a session's process glue may call: the hooks around the callback, JACK's port
    /// buffers and the clock (C, or thin wrappers over it: `JackClock`, Platform's
    /// `MonotonicClock`), pointer and integer conversions, initializers of plain values
    /// (`BitwiseCopyable` structs declared under Sources), the test-only planted allocation, and
    /// its kernel (`kernel.pointee.…`: the kernel's functions are checked above, its link's
    /// cycle entry and exit are the session core's shared glue).
    static func glueMayCall(_ call: String, plainValues: Set<String>) -> Bool {
        let exact: Set = [
            "UnsafePointer", "UnsafeMutablePointer", "Int", "UInt32", "UInt64", "Float",
            "context.assumingMemoryBound", "plantedAllocation",
        ]
        let prefixes = ["RealtimeHooks.", "JackPortBuffer.", "JackClock.", "MonotonicClock.", "kernel.pointee."]
        return exact.contains(call) || plainValues.contains(call) || prefixes.contains { call.hasPrefix($0) }
    }

    /// Names of the structs under Sources that conform to `BitwiseCopyable` where declared: plain
    /// values, holding no reference to retain or release (what their initializers do is checked
    /// by review, not here).
    static func plainValueTypes() throws -> Set<String> {
        var names: Set<String> = []
        for file in sourceFiles() {
            let tokens = try SwiftScanner.tokens(read(file))
            for index in tokens.indices where tokens[index].text == "struct" && index + 2 < tokens.count {
                guard tokens[index + 1].kind == .word, tokens[index + 2].text == ":" else { continue }
                let conformances = tokens[(index + 3)...].prefix { $0.text != "{" && $0.text != "where" }
                if conformances.contains(where: { $0.text == "BitwiseCopyable" }) {
                    names.insert(tokens[index + 1].text)
                }
            }
        }
        return names
    }

    /// Every `nonisolated func …Process` in the callback files.
    static func glueFunctions() throws -> [(file: String, function: FunctionDeclaration)] {
        try callbackFiles.flatMap { file in
            try SwiftScanner.functions(in: read(file))
                .filter { $0.name.hasSuffix("Process") && $0.modifiers.contains("nonisolated") }
                .map { (file, $0) }
        }
    }

    @Test("every session kernel in Engine has its process glue, a nonisolated …Process function")
    func everySessionHasGlue() throws {
        // A session kernel: an Engine/<Name>Kernel.swift that implements `process` (a file that
        // only declares a kernel protocol is not a session).
        let sessions = try Self.kernelFiles.filter { $0.hasPrefix("Engine/") }
            .filter { file in
                try SwiftScanner.functions(in: Self.read(file)).contains { $0.name == "process" && $0.hasBody }
            }
            .map { String(Self.fileName($0).dropLast("Kernel.swift".count)) }
        try #require(!sessions.isEmpty, "no Engine/*Kernel.swift")
        try #require(!Self.callbackFiles.isEmpty, "no *Callbacks.swift under \(Self.sources.path)")
        let glue = Set(try Self.glueFunctions().map(\.function.name))
        for session in sessions {
            let expected = session.prefix(1).lowercased() + session.dropFirst() + "Process"
            #expect(glue.contains(expected), "\(session)Kernel has no nonisolated \(expected) in \(Self.callbackFiles)")
        }
    }

    @Test("each process glue calls only the hooks, the port buffers, the clock and its kernel")
    func glueStaysThin() throws {
        let glue = try Self.glueFunctions()
        try #require(!glue.isEmpty, "no nonisolated …Process function in \(Self.callbackFiles)")
        let plainValues = try Self.plainValueTypes()
        for (file, function) in glue {
            let calls = SwiftScanner.calls(in: function.body)
            let unexpected = calls.filter { !Self.glueMayCall($0, plainValues: plainValues) }.sorted()
            #expect(
                unexpected.isEmpty,
                "\(file): \(function.name) calls \(unexpected): move the work into the checked kernel")
            #expect(
                calls.contains { $0.hasPrefix("kernel.pointee.process") },
                "\(file): \(function.name) never calls its kernel")
        }
    }
}
