package base

// InvariantsEnabled turns on expensive self-checks. It is a constant so that
// production builds compile the checks away; build with -tags invariants to
// enable them.
const InvariantsEnabled = invariantsEnabled
