// out/ is where the README's first command, go run ./cmd/dlgen -out out,
// writes; this file makes it a module of its own, so that go vet ./... and
// go test ./... in the checkout never pick up what dlgen wrote there.
// Everything else under out/ is ignored by git (.gitignore).
module dlgen.invalid/out

go 1.24
