"""karma-batch generate's work: a campaign file checked and written out as job scripts and the
manifest (campaign.json). What it says goes to `say(text, err=False)`."""

import os
from karma_tools.campaign import campaign as campaign_mod
from karma_tools.campaign import jobs
from karma_tools.campaign.batch import MANIFEST, SUFFIX, manifest_text, now_text
from karma_tools.core import ToolError, __version__, write_folder


def generate(campaign, output, scheduler, var, bin_dir, max_ranks_per_node, no_key_check, force,
             say):
    out = os.path.abspath(output)
    variables = {}
    for item in var or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ToolError(f"--var {item}: expected NAME=VALUE", 2)
        variables[name] = value
    tools = campaign_mod.tools_dir()
    camp = campaign_mod.load(campaign, out_dir=out, bin_dir=bin_dir, check_keys=not no_key_check,
                             tool_dir=tools, scheduler=scheduler, variables=variables,
                             executables=True)
    if not camp.jobs:
        raise ToolError(f"every job of {camp.path} is left out by its run's min_ranks; "
                        "nothing written", 2)
    left_out = fit_node(camp, max_ranks_per_node)
    scheduler = camp.scheduler
    for w in camp.warnings:
        say(f"karma-batch: warning: {w}", True)
    if os.path.exists(out) and not force:
        raise ToolError(f"{out} exists; choose another -o or add --force to replace it", 2)

    files, entries = {}, []
    for job in camp.jobs:
        script = f"jobs/{job.name}{SUFFIX[scheduler]}"
        files[script] = jobs.render(job, camp, os.path.join(tools, "karma-envcapture"),
                                    os.path.join(tools, "karma-batch"))
        entries.append(dict(job.as_dict(), script=script, job_id=None, submitted=None,
                            results_file=os.path.join(job.results_dir,
                                                      jobs.RESULT_NAME.format(app=job.app))))
    # generated_in: where the job scripts write; submit refuses a directory moved since.
    files[MANIFEST] = manifest_text(out, {
        "karma_batch_manifest": 1, "karma_version": __version__, "generated": now_text(),
        "generated_in": out, "scheduler": scheduler,
        "campaign": {"name": camp.name, "path": camp.path, "sha256": camp.sha256},
        "results_dir": camp.results_dir, "round_order": camp.round_order,
        "max_ranks_per_node": max_ranks_per_node, "variables": camp.variables,
        "compare": camp.compare, "jobs": entries,
        "left_out": [{"job": j.name, "run": j.run, "ranks": j.ranks, "by": by}
                     for by, left in (("min_ranks", camp.left_out),
                                      ("max_ranks_per_node", left_out)) for j in left]})
    # OUT whole or absent, never half written
    write_folder(out, files, executable={e["script"] for e in entries},
                 what=f"the job scripts under {out}")

    say(f"karma-batch: {len(camp.jobs)} {scheduler} job script(s) for campaign "
        f"'{camp.name}' in {os.path.join(out, 'jobs')}")
    for job in camp.jobs:
        gpus = f", {job.gpus_per_rank} GPU/rank" if job.gpus_per_rank else ""
        say(f"  {job.name}: karma-{job.app}, {job.nodes} node(s) x {job.ranks_per_node} "
            f"rank(s){gpus}, {job.time}")
    if camp.left_out:
        say(f"left out {len(camp.left_out)} job(s) of fewer ranks than their run's min_ranks: "
            f"{', '.join(dict.fromkeys(j.run for j in camp.left_out))}")
    if left_out:
        say(f"left out {len(left_out)} job(s) of more than {max_ranks_per_node} "
            f"rank(s) a node: {', '.join(sorted({j.run for j in left_out}))} "
            f"(--max-ranks-per-node)")
    then = " (runs them here)" if scheduler == "local" else ""
    say(f"results will go to {camp.results_dir}/<job>/; next: karma-batch submit {out}{then}")
    return 0


def fit_node(camp, most):
    """Leaves out (and returns) camp's jobs of more than `most` ranks a node; comparisons
    keep every run: their tables lack those rows."""
    if most is None:
        return []
    if most < 1:
        raise ToolError(f"--max-ranks-per-node {most}: expected a number of ranks, 1 or more", 2)
    left_out = [j for j in camp.jobs if j.ranks_per_node > most]
    if len(left_out) == len(camp.jobs):
        raise ToolError(f"--max-ranks-per-node {most}: every job of {camp.path} runs more ranks "
                        f"a node (the fewest: {min(j.ranks_per_node for j in camp.jobs)}); "
                        "nothing written", 2)
    camp.jobs = [j for j in camp.jobs if j.ranks_per_node <= most]
    return left_out
