"""Example gpulint plugin: rules an organisation adds without forking gpulint."""
