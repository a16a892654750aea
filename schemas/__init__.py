"""JSON Schemas shipped with gpulint (data only; see the *.json files)."""
