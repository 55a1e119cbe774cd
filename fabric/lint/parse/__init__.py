"""Switch config text (rendered or hand-written) parsed back into what the lint rules compare with the plan."""
