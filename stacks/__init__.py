"""CDK stacks of the project: one stack per organisation file in ``stacks/orgs/``."""
