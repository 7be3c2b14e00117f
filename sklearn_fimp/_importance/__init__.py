"""Importance measures: one public function per module, each validating its
input once and calling a private core."""
