# Aliases for ./dev, which does all set-up itself (see README).
.PHONY: demo test bench schema golden
demo test bench schema golden:
	./dev $@
