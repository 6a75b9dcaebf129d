"""Reading what users have: collection folders, TREC files, and the inputs of the field's other tools."""
