/**
 * What a Job hook (spec.hooks.*.job) must hold to be able to run at all, checked when the plan is
 * created (by zod in parseSpec and by the CRD's rules) instead of after the node was cordoned and
 * drained: a namespace that is a valid namespace name, and a Job template whose pod template has at
 * least one container, each with a name and an image (the Job controller creates no pod without
 * them: the API server refuses a Pod whose container has no image).
 *
 * Pure: zod only. Workflow code imports only its types (a test keeps zod out of the workflow bundle).
 */
import { z } from 'zod';

/** Messages of {@link jobTemplateProblem} (the CRD's rules on `job.template` say the same). */
export const JOB_TEMPLATE_MESSAGES = {
  noContainers:
    'must hold a pod template with at least one container: spec.template.spec.containers (as in a CronJob jobTemplate)',
  containerFields: 'every container of spec.template.spec.containers needs a name and an image',
  restartPolicy:
    "must be Never or OnFailure: a Job's pod cannot restart Always (the Job API refuses it); absent: drainflow sets Never",
} as const;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Why a hook's Job template cannot run, or undefined when it can: it must be `{spec: {template:
 * {spec: {containers: [...]}}}}` with at least one container, each with a `name` and an `image`
 * (JobTemplateSchema refuses empty ones). Nothing else of the template is checked here (the API server checks the Job on creation).
 */
export function jobTemplateProblem(template: unknown): string | undefined {
  const spec = isObj(template) ? template.spec : undefined;
  const pod = isObj(spec) ? spec.template : undefined;
  const podSpec = isObj(pod) ? pod.spec : undefined;
  const containers = isObj(podSpec) ? podSpec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) return JOB_TEMPLATE_MESSAGES.noContainers;
  if (!containers.every((c) => isObj(c) && c.name !== undefined && c.image !== undefined))
    return JOB_TEMPLATE_MESSAGES.containerFields;
  return undefined;
}

/**
 * The part of a hook's Job template drainflow reads or checks; every other field is kept as written
 * (loose objects, and the CRD keeps unknown fields at each of these levels). Refused with
 * {@link jobTemplateProblem}'s message when no container could run.
 */
export const JobTemplateSchema = z
  .looseObject({
    spec: z
      .looseObject({
        template: z
          .looseObject({
            spec: z
              .looseObject({
                containers: z
                  .array(
                    z
                      .looseObject({
                        name: z.string().min(1).optional().describe('The container name (required).'),
                        image: z.string().min(1).optional().describe('The container image (required).'),
                      })
                      .describe('A container of the hook pod (a Kubernetes Container).'),
                  )
                  .optional()
                  .describe('The containers of the hook pod: at least one, each with a name and an image.'),
                restartPolicy: z
                  .enum(['Never', 'OnFailure'], { message: JOB_TEMPLATE_MESSAGES.restartPolicy })
                  .optional()
                  .describe(
                    "Never (the default drainflow sets) or OnFailure; a Job's pod cannot restart Always (the Job API refuses it).",
                  ),
              })
              .optional()
              .describe(
                'The pod spec (a Kubernetes PodSpec); drainflow sets nodeName and adds a toleration.',
              ),
          })
          .optional()
          .describe('The pod template of the Job (a Kubernetes PodTemplateSpec).'),
      })
      .optional()
      .describe('The Job spec (a Kubernetes JobSpec).'),
  })
  .superRefine((t, ctx) => {
    const problem = jobTemplateProblem(t);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
