"""Exact finite-sample audit certificates (the audit paper, Sections 2–9).

Pure statistics, no I/O: counts and sizes in, a frozen :class:`Certificate` out. Importing this
package registers every certificate function, so :func:`recompute` can rebuild any certificate
from its JSON; every registered function is exported here.
"""

from rankcut.certify import (  # noqa: F401  (imported to register their certificate functions)
    diagnostics,
    excluded,
    interleaved,
    learning,
    noise,
    planning,
    prefixes,
    recall,
    screening,
    sequential,
    stratified,
    stress,
    whole,
)
from rankcut.certify.bounds import (
    clopper_pearson_interval,
    cp_lower,
    cp_upper,
    hypergeom_lower,
    hypergeom_upper,
)
from rankcut.certify.curves import excluded_curve, sequential_curve, two_pool_curve
from rankcut.certify.diagnostics import (
    amplification_diagnostics,
    direct_miss_rate_certificate,
    incremental_coverage_certificate,
)
from rankcut.certify.excluded import (
    excluded_pool_bound,
    excluded_pool_certificate,
    excluded_pool_finite_certificate,
    excluded_pool_hoeffding_certificate,
    full_review_recall_certificate,
    p0_upper_hoeffding,
)
from rankcut.certify.interleaved import InterleavedReview, InterleavedRule, interleaved_recall_certificate
from rankcut.certify.learning import (
    agnostic_finite_class_design_bound,
    agnostic_vc_design_bound,
    finite_class_design_bound,
    neyman_pearson_select,
    neyman_pearson_slack,
    prevalence_design_size,
    sparse_union_design_bound,
    vc_design_bound,
)
from rankcut.certify.noise import noisy_excluded_pool_certificate, noisy_label_certificate
from rankcut.certify.planning import (
    plan_binomial,
    plan_hypergeometric,
    plan_missed_mass,
    plan_rule_out,
    shared_reference_size,
    two_pool_recall_sizes,
)
from rankcut.certify.prefixes import (
    choose_prefix,
    fixed_sequence,
    fixed_sequence_bound,
    fixed_sequence_finite,
    prefix_bounds,
    prefix_bounds_separate,
    prefix_bounds_separate_finite,
    prefix_bounds_shared,
    prefix_bounds_shared_finite,
    shared_reference_counts,
)
from rankcut.certify.recall import (
    recall_from_missed_mass,
    two_pool_recall_bound,
    two_pool_recall_certificate,
    two_pool_recall_finite_certificate,
)
from rankcut.certify.report import JointReport
from rankcut.certify.result import Certificate, recompute, verify
from rankcut.certify.screening import ReviewRule
from rankcut.certify.sequential import SequentialAudit, sequential_recall_certificate
from rankcut.certify.stratified import stratified_binomial_certificate, stratified_hypergeometric_certificate
from rankcut.certify.stress import (
    average_variant_certificate,
    stress_test_certificate,
    worst_cluster_certificate,
)
from rankcut.certify.whole import whole_population_certificate

__all__ = [
    "Certificate",
    "InterleavedReview",
    "InterleavedRule",
    "JointReport",
    "ReviewRule",
    "SequentialAudit",
    "agnostic_finite_class_design_bound",
    "agnostic_vc_design_bound",
    "amplification_diagnostics",
    "average_variant_certificate",
    "choose_prefix",
    "clopper_pearson_interval",
    "cp_lower",
    "cp_upper",
    "direct_miss_rate_certificate",
    "excluded_curve",
    "excluded_pool_bound",
    "excluded_pool_certificate",
    "excluded_pool_finite_certificate",
    "excluded_pool_hoeffding_certificate",
    "finite_class_design_bound",
    "fixed_sequence",
    "fixed_sequence_bound",
    "fixed_sequence_finite",
    "full_review_recall_certificate",
    "hypergeom_lower",
    "hypergeom_upper",
    "incremental_coverage_certificate",
    "interleaved_recall_certificate",
    "neyman_pearson_select",
    "neyman_pearson_slack",
    "noisy_excluded_pool_certificate",
    "noisy_label_certificate",
    "p0_upper_hoeffding",
    "plan_binomial",
    "plan_hypergeometric",
    "plan_missed_mass",
    "plan_rule_out",
    "prevalence_design_size",
    "prefix_bounds",
    "prefix_bounds_separate",
    "prefix_bounds_separate_finite",
    "prefix_bounds_shared",
    "prefix_bounds_shared_finite",
    "recall_from_missed_mass",
    "recompute",
    "sequential_curve",
    "sequential_recall_certificate",
    "shared_reference_size",
    "shared_reference_counts",
    "sparse_union_design_bound",
    "stratified_binomial_certificate",
    "stratified_hypergeometric_certificate",
    "stress_test_certificate",
    "two_pool_curve",
    "two_pool_recall_bound",
    "two_pool_recall_certificate",
    "two_pool_recall_finite_certificate",
    "two_pool_recall_sizes",
    "vc_design_bound",
    "verify",
    "whole_population_certificate",
    "worst_cluster_certificate",
]
