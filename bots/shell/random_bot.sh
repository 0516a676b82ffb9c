#!/bin/sh
# A random bot for the card referee in POSIX sh and awk: no ZeroMQ, no msgpack, no JSON library.
#
# It speaks the stdio transport (protocol/PROTOCOL.md, "The stdio transport"): the referee runs it behind the
# stdio bridge, which writes every referee message to its stdin as one line of JSON and reads one JSON object
# per line from its stdout. Try it:
#
#     referee play scout stdio:bots/shell/random_bot.sh random
#
# sh reads the lines one by one (`read` takes a line as soon as it arrives; awk, reading a pipe, may wait for
# more), and awk turns each message into the answer, if it needs one. Any element of legal_actions is legal
# as it is, so the bot copies one, as text, into its action. Diagnostics go to stderr: stdout is the channel.

# For each message: an action line for a request, "bye" or "refused: REASON" for those, nothing otherwise.
ANSWER='
{
    members($0)
    type = MEMBER["type"]
    if (type == "\"request\"") {
        srand(seed)
        count = elements(MEMBER["legal_actions"])
        print "{\"type\":\"action\",\"id\":" MEMBER["id"] ",\"action\":" ELEMENT[int(rand() * count) + 1] "}"
    } else if (type == "\"bye\"") {
        print "bye"
    } else if (type == "\"refused\"") {
        print "refused: " MEMBER["reason"]
    }
}

# PART[1..n] = the pieces of a JSON object or array text between its commas at the top level (strings, with
# their escapes, and nested brackets skipped over); returns n.
function split_top(text, PART,    size, i, c, depth, in_string, escaped, start, n) {
    size = length(text); depth = 0; in_string = 0; escaped = 0; n = 0
    for (i = 1; i <= size; i++) {
        c = substr(text, i, 1)
        if (in_string) {
            if (escaped) escaped = 0
            else if (c == "\\") escaped = 1
            else if (c == "\"") in_string = 0
        } else if (c == "\"") {
            in_string = 1
        } else if (c == "{" || c == "[") {
            if (++depth == 1) start = i + 1
        } else if (c == "}" || c == "]") {
            if (depth-- == 1 && i > start) PART[++n] = substr(text, start, i - start)
        } else if (c == "," && depth == 1) {
            PART[++n] = substr(text, start, i - start)
            start = i + 1
        }
    }
    return n
}

# MEMBER[key] = the JSON text of each value of the top-level object (keys here have no escapes, so the first
# quote-colon ends the key).
function members(text,    PART, n, i, colon) {
    n = split_top(text, PART)
    for (i = 1; i <= n; i++) {
        colon = index(PART[i], "\":")
        MEMBER[substr(PART[i], 2, colon - 2)] = substr(PART[i], colon + 2)
    }
}

# ELEMENT[1..n] = the JSON text of each element of an array text; returns n.
function elements(text) {
    return split_top(text, ELEMENT)
}
'

echo '{"type":"hello","protocol":1,"name":"sh-random","version":"1"}'
decisions=0
while IFS= read -r message; do
    decisions=$((decisions + 1))
    answer=$(printf '%s\n' "$message" | awk -v seed="$$$decisions" "$ANSWER")
    case $answer in
        bye) exit 0 ;;
        refused:*) echo "$answer" >&2; exit 2 ;;
        ?*) printf '%s\n' "$answer" ;;
    esac
done
