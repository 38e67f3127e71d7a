/**
 * The one module of drainflow that imports values from `@kubernetes/client-node`: every other
 * module imports the client's classes and functions from here (types may come from the package
 * directly; eslint enforces this), so that `npm run build` can replace this file's compiled form,
 * `dist/k8s/client.js`, with a bundle of only the parts of the library drainflow uses (see
 * scripts/build/client-node.ts).
 *
 * Why: the library's entry point (even `KubeConfig` alone, whose module imports `gen/index.js`)
 * loads the generated client of every Kubernetes API group, about 18 MB of JavaScript source
 * (`ObservableAPI.js` 7.4 MB, the request factories 8.5 MB, `ObjectParamAPI.js` 0.7 MB, the models
 * 1.4 MB). V8 keeps every loaded module's source text on the heap for the process's lifetime, so
 * each drainflow process carried it in its main-thread heap. The bundle keeps the API classes
 * listed below and drops the others and the comments: about 2 MB.
 *
 * Under tsx (a checkout, the tests) this file re-exports the package itself: the same classes,
 * only not tree-shaken.
 */
export {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  ListWatch,
  Observable,
  PatchStrategy,
  PolicyV1Api,
  ResponseContext,
  V1MicroTime,
  Watch,
  makeInformer,
  setHeaderOptions,
} from '@kubernetes/client-node';
export type * from '@kubernetes/client-node';
