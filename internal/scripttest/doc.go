// Package scripttest runs scripted scenario tests stored as golden files,
// in the style of raft's data-driven interaction tests, with only the
// standard library.
//
// # Script files
//
// A script is a text file, usually testdata/*.txt, made of blocks. Each
// block is a command line, optional input lines, a separator line "----",
// and the expected output:
//
//	# Lines starting with # between blocks are comments.
//	send 1->2 size=64KiB drop=(3,7)
//	optional input line
//	----
//	expected output
//	ends at the first blank line
//
// The command line is a name followed by arguments separated by spaces:
// bare words (1->2), key=value pairs, and key=(a,b,c) lists. A value or list
// item may be a Go double-quoted string ("a b"). Input lines run until the
// separator. Output that itself contains blank lines is written between two
// doubled separators:
//
//	dump
//	----
//	----
//	first paragraph
//
//	second paragraph
//	----
//	----
//
// # Running
//
// [Walk] runs every script in a directory as a subtest, [WalkFiles] does so
// with fresh state per script, and [RunFile] runs one. Each block's command is passed to the test's handler as a [Cmd],
// and the handler returns the block's output. A mismatch fails the test
// with a diff naming the script file and line. Run the tests with -update
// (a flag this package registers) to rewrite the expected outputs in place
// instead.
//
// Handlers read arguments through typed helpers ([Cmd.Int], [Cmd.Duration],
// [Cmd.Size], [Cmd.Ints], ...) that fail the test with a message naming the
// file, line and argument. After the handler returns, any argument it never
// read fails the test too, so a misspelled key does not pass silently.
//
// # Limits
//
// A script is at most MaxScriptBytes long. Output containing the line pair
// "----", "----" cannot be stored and fails the rewrite.
package scripttest
