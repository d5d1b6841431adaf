/// A usage error: the message names the option or word that was wrong.
struct UsageError: Error, Equatable, Sendable {
    let message: String
}

/// Parses arguments as `security`'s users type them: grouped short flags (`-gU`), attached values
/// (`-aalice`), GNU style long options (`--access-group g`, `--access-group=g`), and options anywhere before
/// `--` — before, between or after the other words, as GNU `getopt` permutes them, so
/// `find-generic-password -s S ./c.keychain -w` and `register-application EXE --passphrase-file F` mean what
/// they say. An option that takes a value takes the next word whatever it is (`-w -U` stores "-U"); `-`
/// alone is a word, and every word after `--` is one. Pure: it never reads or prints.
enum ArgumentParser {
    static func parse(_ words: [String], options: [OptionSpec]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments(declaring: options)
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--" {
                result.positionals += words[(index + 1)...]
                return result
            }
            if word.hasPrefix("--") {
                index = try parseLong(word, at: index, in: words, options: options, into: &result)
                continue
            }
            guard word.hasPrefix("-"), word.count > 1 else {
                // Not an option: a word in its place among the words, and the options go on after it.
                result.positionals.append(word)
                index += 1
                continue
            }
            index = try parseShortGroup(word, at: index, in: words, options: options, into: &result)
        }
        return result
    }

    private static func parseLong(
        _ word: String, at index: Int, in words: [String], options: [OptionSpec], into result: inout ParsedArguments
    ) throws(UsageError) -> Int {
        let body = word.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let attached = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
        guard let spec = options.first(where: { $0.long == name }) else {
            throw UsageError(message: "unknown option --\(name)")
        }
        switch spec.argument {
        case .none:
            guard attached == nil else { throw UsageError(message: "option --\(name) takes no value") }
            result.addFlag(spec.key)
            return index + 1
        case .required, .requiredOrPrompt:
            if let attached {
                result.addValue(attached, for: spec.key)
                return index + 1
            }
            if index + 1 < words.count {
                result.addValue(words[index + 1], for: spec.key)
                return index + 2
            }
            if spec.argument == .requiredOrPrompt {
                result.addPrompt(spec.key)
                return index + 1
            }
            throw UsageError(message: "option --\(name) needs a \(spec.valueName)")
        }
    }

    private static func parseShortGroup(
        _ word: String, at index: Int, in words: [String], options: [OptionSpec], into result: inout ParsedArguments
    ) throws(UsageError) -> Int {
        var letters = Substring(word.dropFirst())
        while let letter = letters.first {
            letters = letters.dropFirst()
            guard let spec = options.first(where: { $0.short == letter }) else {
                throw UsageError(message: "unknown option -\(letter)")
            }
            switch spec.argument {
            case .none:
                result.addFlag(spec.key)
            case .required, .requiredOrPrompt:
                if !letters.isEmpty {
                    result.addValue(String(letters), for: spec.key)
                    return index + 1
                }
                if index + 1 < words.count {
                    result.addValue(words[index + 1], for: spec.key)
                    return index + 2
                }
                if spec.argument == .requiredOrPrompt {
                    result.addPrompt(spec.key)
                    return index + 1
                }
                throw UsageError(message: "option -\(letter) needs a \(spec.valueName)")
            }
        }
        return index + 1
    }
}
